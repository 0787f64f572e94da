/**
 * `VllmLb`: the vLLM data-parallel load-balancing front end (`DPLBAsyncMPClient`) as pure
 * functions over an immutable `VllmLbState`: `init`, `score`, `route`, `coord` (a coordinator
 * publication) and `finish`. Imported as the namespace `VllmLb` (`VllmLb.route(state, id)`), like
 * `DpBudget` and `DpController`; the policy built on it is `makeVllmLb` (`VllmLbPolicy.ts`).
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import { packed } from "../internal/packed.js"
import { checkClientOptions } from "../Options.js"
import { type PolicyError, policyError } from "../Policy.js"
import type { VllmClientOptions, VllmEngineRow, VllmLbRouted, VllmLbState } from "./VllmLbTypes.js"

/**
 * The front end's types, defined in the leaf module `VllmLbTypes.ts` and re-exported here (and at
 * the package's top level).
 *
 * @since 0.1.0
 */
export type { VllmClientOptions, VllmEngineRow, VllmLbRouted, VllmLbState } from "./VllmLbTypes.js"

/**
 * `coord` (a coordinator publication) and `finish` (finished requests), defined in
 * `VllmLbUpdates.ts` and re-exported here, so they stay `VllmLb.coord` and `VllmLb.finish`.
 *
 * @since 0.1.0
 */
export { coord, finish } from "./VllmLbUpdates.js"

/** `n` rows `[0, 0, 0]` in a packed array (see `packed`). */
const zeroRows = (n: number): Array<VllmEngineRow> => {
  const out: Array<VllmEngineRow> = []
  for (let i = 0; i < n; i++) out.push([0, 0, 0])
  return out
}

/**
 * The initial front-end state: every row `[0, 0, 0]`, no in-flight requests, wave 0, engines not
 * running, start index `floor(numEngines * clientIndex / clientCount)`.
 *
 * **When to use**: to start a replay of `DPLBAsyncMPClient`; `makeVllmLb` wraps it as a `Policy`.
 *
 * Errors: `NoRanks` when `numEngines < 1`; `InvalidInput` (field `clientCount` / `clientIndex`)
 * when `checkClientOptions` refuses them (`clientCount` not an integer >= 1, `clientIndex` not an
 * integer in `0..clientCount-1`). Defaults: C = 1, index 0.
 * Upstream asserts `numEngines > 1`; `numEngines = 1` is accepted here and always picks engine 0.
 *
 * Reproduces `DPLBAsyncMPClient.__init__` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s = VllmLb.init(8, { clientCount: 3, clientIndex: 1 })
 * !("_tag" in s) && s.engStartIndex // => 2
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const init = (numEngines: number, options: VllmClientOptions = {}): VllmLbState | PolicyError => {
  const clientCount = options.clientCount ?? 1
  const clientIndex = options.clientIndex ?? 0
  if (!Number.isInteger(numEngines) || numEngines < 1)
    return policyError("NoRanks", `numEngines must be an integer >= 1, got ${numEngines}`, "numEngines")
  const bad = checkClientOptions(options.clientCount, options.clientIndex)
  if (bad !== undefined) return bad
  return {
    numEngines,
    clientCount,
    clientIndex,
    lbEngines: zeroRows(numEngines),
    inflight: packed(numEngines, 0),
    reqsInFlight: HashMap.empty(),
    engStartIndex: Math.floor((numEngines * clientIndex) / clientCount),
    currentWave: 0,
    enginesRunning: false
  }
}

/**
 * The score of one engine, lower is preferred:
 * `max(clientCount * inflight, waiting + running)`, plus `waiting * 6.0 * max(0, kv - 0.5)` when
 * `waiting != 0`, evaluated left to right so the doubles equal CPython's (compare with `===`).
 * With `kvCacheUsage` undefined no penalty is added.
 *
 * **When to use**: to show or test why an engine was (not) chosen; `VllmLb.route` applies it to every engine.
 *
 * Reproduces `DPLBAsyncMPClient.get_core_engine_for_request` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * VllmLb.score([2, 0, 0.5000001], 0, 1) // => 2.0000011999999994
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const score = (row: VllmEngineRow, inflight: number, clientCount: number): number => {
  const waiting = row[0]
  const kv = row[2]
  let total = Math.max(clientCount * inflight, waiting + row[1])
  if (waiting !== 0 && kv !== undefined) total = total + waiting * 6.0 * Math.max(0.0, kv - 0.5)
  return total
}

/**
 * Route one request: `add_request_async` then `get_core_engine_for_request`.
 *
 * **When to use**: exact replay of vLLM's internal DP load balancer. Without `dataParallelRank`
 * it scores every engine from the rotating start index (strict `<`, so the first minimum in scan
 * order wins), bumps the chosen row's `waiting` by `clientCount` and rotates the start index.
 * With `dataParallelRank` it picks that engine with no scoring, no bump and no rotation. Either
 * way the request is stamped with `currentWave`, counted in flight, and the first request while
 * engines are not running sends FIRST_REQ (modelled as taking effect before the next operation).
 * `skip` (beyond upstream, default none) lists engines the scan must pass over (e.g. unhealthy).
 *
 * Errors: `InvalidRoutedRank` (field `dataParallelRank`) for a rank outside `0..N-1`;
 * `AllRanksUnavailable` when `skip` excludes every engine.
 *
 * Reproduces vllm `core_client.py` (`DPLBAsyncMPClient`, `DPAsyncMPClient.add_request_async`), commit `00080ee1`.
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s0 = VllmLb.init(2)
 * if (!("_tag" in s0)) {
 *   const r = VllmLb.route(s0, "r0")
 *   !("_tag" in r) && r.chosen // => 0
 *   !("_tag" in r) && r.state.engStartIndex // => 1
 * }
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const route = (
  state: VllmLbState,
  requestId: string,
  dataParallelRank?: number,
  skip?: ReadonlyArray<boolean>
): VllmLbRouted | PolicyError => {
  const n = state.numEngines
  const requestWave = state.currentWave
  const startIndexUsed = state.engStartIndex
  let chosen: number
  let scores: Array<number> | null = null
  let lbEngines = state.lbEngines
  let engStartIndex = state.engStartIndex
  if (dataParallelRank === undefined) {
    let minScore = Number.POSITIVE_INFINITY
    chosen = -1
    // scores in index order (indexed stores: pushing doubles is several times slower), then the
    // scan from the start index
    const rows = state.lbEngines
    const inflight = state.inflight
    const c = state.clientCount
    const sc = new Array<number>(n)
    for (let i = 0; i < n; i++) sc[i] = score(rows[i]!, inflight[i]!, c)
    scores = sc
    for (let i = 0, idx = startIndexUsed % n; i < n; i++, idx = idx + 1 === n ? 0 : idx + 1) {
      if (skip !== undefined && skip[idx] === true) continue
      const engineScore = sc[idx]!
      if (engineScore < minScore) {
        minScore = engineScore
        chosen = idx
      }
    }
    if (chosen < 0) return policyError("AllRanksUnavailable", "every engine is excluded", "status")
    const row = state.lbEngines[chosen]!
    const next = state.lbEngines.slice()
    next[chosen] = [row[0] + state.clientCount, row[1], row[2]]
    lbEngines = next
    engStartIndex = (engStartIndex + 1) % n
  } else {
    if (!Number.isInteger(dataParallelRank) || dataParallelRank < 0 || dataParallelRank >= n)
      return policyError(
        "InvalidRoutedRank",
        `data_parallel_rank ${dataParallelRank} is outside 0..${n - 1}`,
        "dataParallelRank"
      )
    chosen = dataParallelRank
  }
  const inflight = state.inflight.slice()
  inflight[chosen] = inflight[chosen]! + 1
  const firstReq = !state.enginesRunning
  return {
    chosen,
    startIndexUsed,
    scores,
    requestWave,
    firstReq,
    state: {
      numEngines: n,
      clientCount: state.clientCount,
      clientIndex: state.clientIndex,
      lbEngines,
      inflight,
      reqsInFlight: HashMap.set(state.reqsInFlight, requestId, chosen),
      engStartIndex,
      currentWave: state.currentWave,
      enginesRunning: state.enginesRunning || firstReq
    }
  }
}
