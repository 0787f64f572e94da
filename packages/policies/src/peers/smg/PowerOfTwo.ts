/**
 * SMG `power_of_two`. Upstream: lightseekorg/smg `model_gateway/src/policies/power_of_two.rs`,
 * commit 73da68ca9472bbc0ff5f63d31a8a21fbb8696359.
 *
 * @since 0.2.0
 */
import { checkDraw, effectiveTokenUsage, healthyIndices, selected } from "./internal/common.js"
import type { SmgLoadReport, SmgPoll, SmgResult, SmgWorker } from "./Types.js"

/**
 * State of SMG `power_of_two`: the cached load reports by worker url.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgPowerOfTwoState {
  readonly reports: ReadonlyMap<string, SmgLoadReport>
}

/**
 * Deliver a load poll to `power_of_two` (`update_loads`): reports merge into the cache
 * (`HashMap::extend`: a worker missing from the poll keeps its report); `null` removes the
 * worker's entry (`remove_worker`).
 *
 * **When to use**: after each `WorkerMonitor` poll, before routing.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const s = Smg.smgPowerOfTwoUpdate({ reports: new Map() }, new Map([["a", { dpRankCount: 1, loads: [] }]]))
 * s.reports.size // => 1
 * Smg.smgPowerOfTwoUpdate(s, new Map([["a", null]])).reports.size // => 0
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgPowerOfTwoUpdate = (state: SmgPowerOfTwoState, poll: SmgPoll): SmgPowerOfTwoState => {
  const reports = new Map(state.reports)
  for (const [url, r] of poll) {
    if (r === null) reports.delete(url)
    else reports.set(url, r)
  }
  return { reports }
}

/**
 * SMG `power_of_two` `select_worker`. `h` = healthy indices; empty -> `None`; one -> `h[0]` (no
 * draw, no `processed_requests` bump). Otherwise draws `i1 in [0,n)`, `r2 in [0,n-1)`,
 * `i2 = (i1 + 1 + r2) % n`; if **both** candidates have a cached report they compare
 * `effective_token_usage()` (mean `token_usage`), else **both** compare `load` (the fix upstream
 * tests in `test_reproduce_incompatible_metric_bug`); the first pick wins ties (`la <= lb`).
 * `details`: `candidates` (indices), `metric` (`token_usage` | `request_count`), `scores`.
 *
 * **When to use**: replaying SMG's power-of-two with explicit draws.
 *
 * @example
 * ```ts
 * import { Smg } from "@loadledger/policies"
 * const w = (url: string, load: number) => ({ url, healthy: true, load, processedRequests: 0, circuitBreakerCanExecute: true })
 * const out = Smg.smgPowerOfTwoSelect({ reports: new Map() }, [w("a", 3), w("b", 1)], [0, 0])
 * out._tag === "SmgSelected" && out.index // => 1
 * ```
 *
 * @category smg
 * @since 0.2.0
 */
export const smgPowerOfTwoSelect = (
  state: SmgPowerOfTwoState,
  workers: ReadonlyArray<SmgWorker>,
  draws: ReadonlyArray<number>
): SmgResult<SmgPowerOfTwoState> => {
  const h = healthyIndices(workers)
  if (h.length === 0) return selected(undefined, state, false, {})
  if (h.length === 1) return selected(h[0], state, false, { single: true })
  const n = h.length
  const bad = checkDraw(draws, 0, n) ?? checkDraw(draws, 1, n - 1)
  if (bad !== undefined) return bad
  const i1 = draws[0]!
  const i2 = (i1 + 1 + draws[1]!) % n
  const a = h[i1]!
  const b = h[i2]!
  const ra = state.reports.get(workers[a]!.url)
  const rb = state.reports.get(workers[b]!.url)
  const both = ra !== undefined && rb !== undefined
  const la = both ? effectiveTokenUsage(ra) : workers[a]!.load
  const lb = both ? effectiveTokenUsage(rb) : workers[b]!.load
  return selected(la <= lb ? a : b, state, true, {
    candidates: [a, b],
    metric: both ? "token_usage" : "request_count",
    scores: [la, lb]
  })
}
