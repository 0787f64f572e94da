/**
 * production-stack `RoundRobinRouter`. Upstream: vllm-project/production-stack
 * `src/vllm_router/routers/routing_logic.py`, commit a6c01db05f65f556235413ba8dbcfb0c01132fff.
 *
 * @since 0.2.0
 */

/**
 * State of production-stack `roundrobin`: one cursor per endpoint **set** (key: the sorted urls).
 *
 * @category production-stack
 * @since 0.2.0
 */
export interface PsRoundRobinState {
  readonly nextIndex: ReadonlyMap<string, number>
}

/**
 * `RoundRobinRouter.route_request`: `key = sorted(set(urls))`, `i = next[key]` (0), `next[key] = i + 1`,
 * pick `key[i % len(key)]`; list order does not matter, a changed set starts its own cursor.
 * An empty list: `url` undefined and `error: "ValueError"` (upstream raises). Both caches clear at
 * 1024 entries.
 *
 * **When to use**: replaying production-stack's round robin; `production-stack/roundrobin` wraps it.
 *
 * @example
 * ```ts
 * import { ProductionStack } from "@loadledger/policies"
 * const a = ProductionStack.psRoundRobinSelect({ nextIndex: new Map() }, ["b", "a"])
 * a.url // => "a"
 * ProductionStack.psRoundRobinSelect(a.state, ["a", "b"]).url // => "b"
 * ```
 *
 * @category production-stack
 * @since 0.2.0
 */
export const psRoundRobinSelect = (
  state: PsRoundRobinState,
  urls: ReadonlyArray<string>
): { readonly url: string | undefined; readonly state: PsRoundRobinState; readonly error?: "ValueError" } => {
  if (urls.length === 0) return { url: undefined, state, error: "ValueError" }
  const key = [...new Set(urls)].sort()
  const k = key.join("\u0000")
  const i = state.nextIndex.get(k) ?? 0
  const next = new Map(state.nextIndex.size >= 1024 ? [] : state.nextIndex)
  next.set(k, i + 1)
  return { url: key[i % key.length], state: { nextIndex: next } }
}
