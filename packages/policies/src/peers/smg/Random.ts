/**
 * SMG `random`. Upstream: lightseekorg/smg `model_gateway/src/policies/random.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { checkDraw, healthyIndices, selected } from "./internal/common.js"
import type { SmgResult, SmgWorker } from "./Types.js"

/**
 * SMG `random` `select_worker`: `h` = healthy indices; empty -> `None`; else `h[draws[0]]` with
 * `draws[0]` in `[0, len(h))` (upstream draws it from `rand::rng()`). A missing or out-of-range draw
 * is a `PolicyError` naming `draws[0]`.
 *
 * **When to use**: replaying SMG's random policy with explicit draws.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string, healthy: boolean) => ({ url, healthy, load: 0, processedRequests: 0, circuitBreakerCanExecute: true })
 * const out = Smg.smgRandomSelect([w("a", false), w("b", true), w("c", true)], [1])
 * out._tag === "SmgSelected" && out.index // => 2
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgRandomSelect = (
  workers: ReadonlyArray<SmgWorker>,
  draws: ReadonlyArray<number>
): SmgResult<undefined> => {
  const h = healthyIndices(workers)
  if (h.length === 0) return selected(undefined, undefined, false, {})
  const bad = checkDraw(draws, 0, h.length)
  if (bad !== undefined) return bad
  return selected(h[draws[0]!], undefined, false, { draw: draws[0], healthy: h })
}
