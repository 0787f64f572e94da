/**
 * Dynamo's vLLM-style DP load-balancing selector (`selector_vllm.rs`): score `waiting * W + running`
 * per (worker, dp_rank), rotating start index, first minimum in rotated order.
 *
 * @since 0.2.0
 */

/**
 * The selector's state: per `"workerId/dpRank"` key the `(waiting, running)` counts, the rotating
 * `startIndex`, and the waiting weight (`vllm_dplb_waiting_weight`, default 4).
 *
 * @category dynamo
 * @since 0.2.0
 */
export interface VllmSelectorState {
  readonly counts: ReadonlyMap<string, { readonly waiting: number; readonly running: number }>
  readonly startIndex: number
  readonly waitingWeight: number
}

/**
 * Key of a (worker, dp_rank) pair in {@link VllmSelectorState.counts}.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * Dynamo.vllmKey(3, 1) // => "3/1"
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmKey = (workerId: number, dpRank: number): string => `${workerId}/${dpRank}`

/**
 * A fresh selector with the given waiting weight (upstream default 4) and no counts.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * Dynamo.vllmSelectorInit().waitingWeight // => 4
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmSelectorInit = (waitingWeight = 4): VllmSelectorState => ({
  counts: new Map(),
  startIndex: 0,
  waitingWeight
})

/**
 * Score of one (worker, dp_rank): `waiting * W + running`; 0 for a pair with no counts.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const s = Dynamo.vllmSetCounts(Dynamo.vllmSelectorInit(4), 1, 0, 2, 0)
 * Dynamo.vllmScore(s, 1, 0) // => 8
 * Dynamo.vllmScore(s, 2, 0) // => 0
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmScore = (s: VllmSelectorState, workerId: number, dpRank: number): number => {
  const c = s.counts.get(vllmKey(workerId, dpRank))
  return c === undefined ? 0 : c.waiting * s.waitingWeight + c.running
}

const put = (s: VllmSelectorState, k: string, waiting: number, running: number): VllmSelectorState => {
  const m = new Map(s.counts)
  m.set(k, { waiting, running })
  return { ...s, counts: m }
}

/**
 * `set_counts`: replace a pair's `(waiting, running)`.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * Dynamo.vllmScore(Dynamo.vllmSetCounts(Dynamo.vllmSelectorInit(2), 0, 0, 1, 3), 0, 0) // => 5
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmSetCounts = (
  s: VllmSelectorState,
  workerId: number,
  dpRank: number,
  waiting: number,
  running: number
): VllmSelectorState => put(s, vllmKey(workerId, dpRank), waiting, running)

/**
 * The lifecycle hooks: `admit` (`record_admit`, waiting + 1), `running` (waiting - 1 saturating,
 * running + 1; creates the entry), `finish` (running - 1 saturating, only for a known pair).
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * let s = Dynamo.vllmSelectorInit(4)
 * s = Dynamo.vllmHook(s, "admit", 0, 0)
 * s = Dynamo.vllmHook(s, "running", 0, 0)
 * Dynamo.vllmScore(s, 0, 0) // => 1
 * Dynamo.vllmScore(Dynamo.vllmHook(s, "finish", 0, 0), 0, 0) // => 0
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmHook = (
  s: VllmSelectorState,
  hook: "admit" | "running" | "finish",
  workerId: number,
  dpRank: number
): VllmSelectorState => {
  const k = vllmKey(workerId, dpRank)
  const c = s.counts.get(k)
  if (hook === "admit") return put(s, k, (c?.waiting ?? 0) + 1, c?.running ?? 0)
  if (hook === "running") return put(s, k, Math.max((c?.waiting ?? 0) - 1, 0), (c?.running ?? 0) + 1)
  return c === undefined ? s : put(s, k, c.waiting, Math.max(c.running - 1, 0))
}

/**
 * `forget_worker`: drop every rank of a worker.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const s = Dynamo.vllmSetCounts(Dynamo.vllmSelectorInit(4), 1, 0, 5, 5)
 * Dynamo.vllmScore(Dynamo.vllmForget(s, 1), 1, 0) // => 0
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmForget = (s: VllmSelectorState, workerId: number): VllmSelectorState => {
  const m = new Map(s.counts)
  for (const k of s.counts.keys()) if (k.startsWith(`${workerId}/`)) m.delete(k)
  return { ...s, counts: m }
}

/**
 * One selection over `candidates` ((worker, dp_rank) pairs the caller has already filtered to the
 * healthy, allowed ones; sorted here ascending): start at `startIndex % n` (then `startIndex + 1`),
 * scan in rotated order, replace the best on strict `<`. Returns the index into `candidates` (or
 * `undefined` when there is none: upstream `NoEndpoints`), the scores, the start used and the next
 * state. Counts are not changed (admit is the caller's `vllmHook`).
 *
 * **When to use**: Dynamo's `--router-mode` vLLM-DPLB selection with its own counts.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector_vllm.rs` at
 * 35c71e98bcfe6a6161e746091dfed3341786c1bd (not confirmed on main).
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const s = Dynamo.vllmSelectorInit(4)
 * const r = Dynamo.vllmSelect(s, [[1, 0], [2, 0], [3, 0]])!
 * r.index // => 0
 * Dynamo.vllmSelect(r.state, [[1, 0], [2, 0], [3, 0]])!.index // => 1
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const vllmSelect = (
  s: VllmSelectorState,
  candidates: ReadonlyArray<readonly [number, number]>
):
  | {
      readonly index: number
      readonly scores: ReadonlyArray<number>
      readonly startIndexUsed: number
      readonly state: VllmSelectorState
    }
  | undefined => {
  const n = candidates.length
  if (n === 0) return undefined
  const order = candidates.map((_, i) => i)
  order.sort((a, b) => candidates[a]![0] - candidates[b]![0] || candidates[a]![1] - candidates[b]![1])
  const scores = candidates.map(([w, r]) => vllmScore(s, w, r))
  const start = s.startIndex % n
  let best = order[start]!
  for (let i = 1; i < n; i++) {
    const j = order[(start + i) % n]!
    if (scores[j]! < scores[best]!) best = j
  }
  return { index: best, scores, startIndexUsed: start, state: { ...s, startIndex: s.startIndex + 1 } }
}
