/**
 * `simulate`: one policy, one trace, one DP group.
 *
 * @since 0.1.0
 */
import type { SimConfig } from "./Config.js"
import { NEED_INPUT, openLoop, runLoop } from "./internal/loop.js"
import { configOf, resultOf } from "./internal/resultOf.js"
import { TraceBuffer } from "./internal/traceBuffer.js"
import type { PolicyResult } from "./Result.js"
import type { SimPolicy } from "./SimPolicy.js"
import type { TraceRequest } from "./Trace.js"
import type { TraceShape, TraceStream } from "./TraceStream.js"

/**
 * Options that do not change the result: `onProgress(done, total)` is called as requests
 * finish or are rejected (`done` of `total`) (the CLI draws its progress bar with it).
 *
 * @category models
 * @since 0.1.0
 */
export interface SimulateOptions {
  readonly onProgress?: ((done: number, total: number) => void) | undefined
}

/**
 * Replay `trace` through `policy` on a DP group and summarise what happened. Deterministic: the
 * same config (seed included), trace and policy give the same result; no clock is read.
 *
 * **When to use**: to compare routing policies on a real trace (call it once per policy; the
 * arrivals are the same). Requests the policy cannot place, or that can never fit in the KV pool,
 * are counted as rejected, not dropped silently; a run that cannot go on ends with a `Deadlock` or
 * `NoProgress` status naming the ranks. Each request reaches the policy with its `tokenIds`: the
 * trace's own, or ids synthesised from its block hashes or its request id (`tokenIdsOf`), so
 * token-keyed policies (`smg/prefix-hash`) route traces without prompt tokens too; the result's
 * `tokenIds` says which (`traceTokenIds`).
 *
 * **The trace** is an array or, since 0.6.0, any iterable of requests in arrival order, read one
 * arrival at a time: a `TraceStream` (`streamTraceFile`) or any iterable with `count` and
 * `lastArrivalSeconds` is read once, during the run; another iterable is read twice (first to check
 * it and find those two figures, which the run needs before it starts), so it must start a new pass
 * at each `[Symbol.iterator]()` (a generator object cannot: an `InvalidConfig` naming `trace`).
 * Without `recordRequests` nothing of a streamed request outlives it; the result is the array
 * path's to the last digit. A stream that breaks the count it states, or holds a request the
 * simulator cannot run, ends the run there with an `InvalidConfig`.
 *
 * **The step rule.** A group (all ranks under `lockstep`, else each rank alone) is idle until a
 * rank holds a request. A step of the group, at time `t`:
 * 1. every rank forms its batch from its own queue (SGLang: an extend batch if it can, else a decode
 *    batch; vLLM: decodes, then prefill chunks, under one token budget). Admission is KV-aware: a
 *    waiting request is admitted only when its whole prompt (less its cached prefix) fits the
 *    rank's free KV next to what the prefills in progress still need, so a request larger than the
 *    free KV waits at the head of its rank's queue (FCFS) and one larger than the pool never runs.
 *    With `prefillIntervalSteps` k > 1, a step whose group counter is not a multiple of k defers
 *    every prefill on ranks that have a decode to run, unless the rank's last prefill-admitting
 *    step left requests waiting (vLLM's `prefill_schedule_interval` and its saturation guard).
 * 2. a rank that holds requests but formed an empty batch counts an empty attempt; after
 *    `stallSteps` attempts in a row the run ends `NoProgress`, naming the rank and its cause. A step
 *    in which no rank formed a token is re-formed at once (bounded by the same count).
 * 3. with `dummyBatches` (default) the step runs if any rank has tokens; ranks with an empty batch
 *    run a 1-token dummy forward. Without them, a lockstep group's forward runs only when every rank
 *    has a non-empty batch: otherwise it is vetoed — no rank runs, the formed batches wait, and the
 *    group forms again at the next arrival (the wait is `forwardStallSeconds`); with no arrival
 *    left, the run ends `NoProgress` naming the empty ranks.
 * 4. the step lasts what the step model charges for all ranks' batches (lockstep: one duration for
 *    every rank, so one prefill on any rank sets every rank's step); tokens and finishes apply at
 *    its end.
 *
 * @example
 * ```ts
 * import { simulate } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * const rr: Policy<number> = {
 *   name: "rr", init: () => 0, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s, _r) => ({ _tag: "Routed", rank: s % 2, state: s + 1, explanation: {} })
 * }
 * const result = simulate(
 *   { dpSize: 2, stepModel: (ranks) => ({ stepSeconds: 0.01, tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) }) },
 *   [{ requestId: "a", arrivalSeconds: 0, inputLength: 100, outputLength: 3 }],
 *   { name: "rr", make: () => rr as Policy<unknown> }
 * )
 * result.requests.finished // => 1
 * result.ttftSeconds.p50 // => 0.01
 * ```
 *
 * @category simulation
 * @since 0.1.0
 */
export const simulate = (
  config: SimConfig,
  trace: ReadonlyArray<TraceRequest> | Iterable<TraceRequest> | TraceStream,
  policy: SimPolicy,
  options: SimulateOptions = {}
): PolicyResult => {
  const run = runLoop(configOf(config, policy), trace, policy?.make, options.onProgress)
  return resultOf(run, policy)
}

/**
 * `simulate` over an async trace (a network stream, a pipe, stdin: a source that is read once, in
 * order): the same result as `simulate` on the same requests as an array, to the last digit. The
 * trace states its `count` and `lastArrivalSeconds` (the run needs them before it starts; a trace
 * without them is an `InvalidConfig` naming `trace`) and must be in arrival order (a stream cannot
 * be sorted: a request earlier than the one before it ends the run with an `InvalidConfig` naming
 * it). Requests are read 4,096 at a time, between the simulator's rounds, and none is kept past
 * its finish (unless `recordRequests`).
 *
 * **When to use**: for a trace that arrives asynchronously; a file is simpler as `streamTraceFile`.
 *
 * @example
 * ```ts
 * import { simulate, simulateAsync } from "@loadledger/sim"
 * import type { Policy } from "@loadledger/policies"
 * const rr: Policy<number> = {
 *   name: "rr", init: () => 0, observe: (s) => s, finish: (s) => s, setStatus: (s) => s,
 *   route: (s, _r) => ({ _tag: "Routed", rank: s % 2, state: s + 1, explanation: {} })
 * }
 * const policy = { name: "rr", make: () => rr as Policy<unknown> }
 * const config = { dpSize: 2, stepModel: () => ({ stepSeconds: 0.01, tokenImbalanceRatio: 1, ranks: [{ syncWaitSeconds: 0 }, { syncWaitSeconds: 0 }] }) }
 * const requests = [0, 0.005, 0.5].map((t, i) => ({ requestId: String(i), arrivalSeconds: t, inputLength: 100, outputLength: 3 }))
 * async function* arriving() { for (const r of requests) yield r }
 * const trace = { [Symbol.asyncIterator]: arriving, count: 3, lastArrivalSeconds: 0.5 }
 * const result = await simulateAsync(config, trace, policy)
 * result.requests.finished // => 3
 * JSON.stringify(result) === JSON.stringify(simulate(config, requests, policy)) // => true
 * ```
 *
 * @category simulation
 * @since 0.6.0
 */
export const simulateAsync = async (
  config: SimConfig,
  trace: AsyncIterable<TraceRequest> & TraceShape,
  policy: SimPolicy,
  options: SimulateOptions = {}
): Promise<PolicyResult> => {
  const c = configOf(config, policy)
  const shaped =
    typeof trace === "object" &&
    trace !== null &&
    typeof trace[Symbol.asyncIterator] === "function" &&
    Number.isSafeInteger(trace.count) &&
    trace.count >= 0 &&
    typeof trace.lastArrivalSeconds === "number"
  if (!shaped) {
    // no request is read: the result of an empty run, with an InvalidConfig naming the trace
    const empty = resultOf(runLoop(c, [], policy?.make), policy)
    return empty.status._tag === "InvalidConfig"
      ? empty
      : {
          ...empty,
          status: {
            _tag: "InvalidConfig",
            field: "trace",
            message:
              "trace must be an async iterable of requests with count and lastArrivalSeconds (the run needs them before it starts)"
          }
        }
  }
  const buffer = new TraceBuffer(trace[Symbol.asyncIterator](), trace.count, trace.lastArrivalSeconds)
  const loop = openLoop(c, buffer, policy?.make, options.onProgress)
  let status = loop.resume()
  while (status === NEED_INPUT) {
    await buffer.fill()
    status = loop.resume()
  }
  // a run that stopped early reads the rest of its trace (the token ids' tally, the stated count)
  for (loop.arrivals.drain(); loop.arrivals.blocked(); loop.arrivals.drain()) await buffer.fill()
  return resultOf(loop.end(status), policy)
}
