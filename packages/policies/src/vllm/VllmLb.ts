/**
 * `VllmLb`: the vLLM data-parallel load-balancing front end (`DPLBAsyncMPClient`) as pure
 * functions over an immutable `VllmLbState`: `init`, `score`, `route`, `coord` (a coordinator
 * publication) and `finish`. Imported as the namespace `VllmLb` (`VllmLb.route(state, id)`), like
 * `DpBudget` and `DpController`; the policy built on it is `makeVllmLb` (`VllmLbPolicy.ts`).
 *
 * Over 300 lines: one concept (one front end's state and its five functions, each with a runnable
 * example); nearly half of the lines are docstrings and the upstream citations.
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { packed } from "../internal/packed.js"
import { checkClientOptions } from "../Options.js"
import { type PolicyError, policyError } from "../Policy.js"

/**
 * One engine's row in the vLLM front end's load table: `[waiting, running, kvCacheUsage]`.
 * `kvCacheUsage` is a 0..1 fraction; `undefined` means the source did not report it, and then no
 * KV penalty is added (the upstream coordinator always reports it; loadledger's adapters may not).
 *
 * @category vllm
 * @since 0.1.0
 */
export type VllmEngineRow = readonly [waiting: number, running: number, kvCacheUsage: number | undefined]

/**
 * The state of one vLLM data-parallel load-balancing front end (`DPLBAsyncMPClient`), immutable.
 *
 * - `lbEngines[i]`: the coordinator's last row for engine `i`, plus this front end's local
 *   `waiting += clientCount` bumps since then.
 * - `inflight[i]`: requests this front end sent to engine `i` that have not finished.
 * - `reqsInFlight`: request id to engine index (a persistent hash map, so routing stays O(N)).
 * - `engStartIndex`: where the next scan starts; starts at `floor(N * clientIndex / clientCount)`.
 * - `currentWave` / `enginesRunning`: the wave view the coordinator last published.
 *
 * Reproduces `vllm/v1/engine/core_client.py` (`DPLBAsyncMPClient`, `DPAsyncMPClient`) at
 * vllm-project/vllm commit `00080ee13c7a451fce071ccb8d0e94d395acf5a7`.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbState {
  readonly numEngines: number
  readonly clientCount: number
  readonly clientIndex: number
  readonly lbEngines: ReadonlyArray<VllmEngineRow>
  readonly inflight: ReadonlyArray<number>
  readonly reqsInFlight: HashMap.HashMap<string, number>
  readonly engStartIndex: number
  readonly currentWave: number
  readonly enginesRunning: boolean
}

/**
 * Which front end this is: `clientCount` API-server processes (C), this one's `clientIndex` (0..C-1).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmClientOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
}

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
 * What one `route` decided: the chosen engine, the start index the scan used, the per-engine
 * scores (indexed by engine; `null` for an explicit-rank request), the wave stamped on the request,
 * whether a FIRST_REQ went to the coordinator, and the next state.
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbRouted {
  readonly chosen: number
  readonly startIndexUsed: number
  readonly scores: ReadonlyArray<number> | null
  readonly requestWave: number
  readonly firstReq: boolean
  readonly state: VllmLbState
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

/**
 * Apply one coordinator message `(counts, wave, running)`: take the wave and running flag, and
 * when `counts` is not `null` replace the whole load table (local bumps are lost, in-flight counts
 * are kept).
 *
 * **When to use**: whenever the coordinator publishes (see `vllmCoordinatorTimeline` in `@loadledger/sim` for when that happens).
 *
 * Errors: `InvalidInput` (field `counts`) when `counts` does not have exactly N rows.
 *
 * Reproduces the stats-update task of `DPAsyncMPClient` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s0 = VllmLb.init(2)
 * if (!("_tag" in s0)) {
 *   const s1 = VllmLb.coord(s0, [[1, 2, 0.3], [0, 0, 0.0]], 3, true)
 *   !("_tag" in s1) && s1.currentWave // => 3
 * }
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const coord = (
  state: VllmLbState,
  counts: ReadonlyArray<VllmEngineRow> | null,
  wave: number,
  running: boolean
): VllmLbState | PolicyError => {
  if (counts !== null && counts.length !== state.numEngines)
    return policyError(
      "InvalidInput",
      `counts has ${counts.length} rows, expected ${state.numEngines}`,
      "counts"
    )
  return {
    ...state,
    currentWave: wave,
    enginesRunning: running,
    lbEngines: counts === null ? state.lbEngines : counts.map((r): VllmEngineRow => [r[0], r[1], r[2]])
  }
}

/**
 * Handle finished (or aborted) request ids: each known id is removed from `reqsInFlight` and its
 * engine's in-flight count decremented; unknown ids are ignored. `decremented` lists the engines
 * decremented, in input order.
 *
 * **When to use**: on every batch of finished or aborted requests, so in-flight counts never drift (fault case S06).
 *
 * Reproduces `DPLBAsyncMPClient.process_engine_outputs` (vllm `core_client.py`, commit `00080ee1`).
 *
 * @example
 * ```ts
 * import { VllmLb } from "@loadledger/policies"
 * const s0 = VllmLb.init(2)
 * if (!("_tag" in s0)) {
 *   const r = VllmLb.route(s0, "a", 1)
 *   if (!("_tag" in r)) VllmLb.finish(r.state, ["a", "unknown-id"]).decremented // => [1]
 * }
 * ```
 *
 * @category vllm
 * @since 0.1.0
 */
export const finish = (
  state: VllmLbState,
  requestIds: ReadonlyArray<string>
): { readonly state: VllmLbState; readonly decremented: ReadonlyArray<number> } => {
  const decremented: Array<number> = []
  if (requestIds.length === 0 || HashMap.size(state.reqsInFlight) === 0) return { state, decremented }
  let reqs = state.reqsInFlight
  let inflight: Array<number> | undefined
  for (const id of requestIds) {
    const e = Option.getOrUndefined(HashMap.get(reqs, id))
    if (e === undefined) continue
    reqs = HashMap.remove(reqs, id)
    inflight ??= state.inflight.slice()
    inflight[e] = inflight[e]! - 1
    decremented.push(e)
  }
  return inflight === undefined
    ? { state, decremented }
    : {
        state: {
          numEngines: state.numEngines,
          clientCount: state.clientCount,
          clientIndex: state.clientIndex,
          lbEngines: state.lbEngines,
          inflight,
          reqsInFlight: reqs,
          engStartIndex: state.engStartIndex,
          currentWave: state.currentWave,
          enginesRunning: state.enginesRunning
        },
        decremented
      }
}
