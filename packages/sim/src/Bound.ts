/**
 * The ceiling and the reference of a goodput verdict: the balance bound (`simulateBound`, an
 * idealised group no routing policy can beat) and a clairvoyant policy (`clairvoyantPolicy`, an
 * achievable router that knows every request's output length).
 *
 * @since 0.5.0
 */
import type { Policy, RouteRequest } from "@loadledger/policies"
import { extendKvReadTokens } from "@loadledger/step-time/core"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type { SimConfig } from "./Config.js"
import { resolveConfig } from "./Config.js"
import { POOLED_CHUNK_TOKENS, type PooledConfig } from "./internal/pooled.js"
import type { PolicyResult } from "./Result.js"
import type { SimPolicy } from "./SimPolicy.js"
import { type SimulateOptions, simulate } from "./Simulate.js"
import type { RankWork, StepCost, StepModel } from "./StepModel.js"
import type { TraceRequest } from "./Trace.js"

/**
 * The name the balance bound's results carry.
 *
 * @example
 * ```ts
 * import { BALANCE_BOUND } from "@loadledger/sim"
 * BALANCE_BOUND // => "balance-bound"
 * ```
 */
export const BALANCE_BOUND = "balance-bound"

/** Σ_{i=1..e} min(i, k): the keys e fresh queries read under a top-k cap. */
const cappedPairs = (e: number, k: number): number =>
  e <= k ? (e * (e + 1)) / 2 : (k * (k + 1)) / 2 + (e - k) * k

/**
 * The balance bound's step model: the pooled batch `ranks[0]` (the whole group's work) costs the
 * larger of (a) `model` on `dpSize` ranks each holding exactly `1 / dpSize` of it (no sync wait, no
 * idle rank) and (b) `model` on one rank running the largest piece that cannot be split (one
 * request's prefill chunk, here the mean chunk of the batch with no prefix: no larger than the
 * largest chunk's cost, so the bound stays a bound) while the others idle.
 */
const boundStepModel =
  (model: StepModel, dpSize: number, sparseTopK: number | undefined): StepModel =>
  (ranks): StepCost => {
    const w = ranks[0]!
    const share = (x: number | undefined) => (x === undefined ? undefined : x / dpSize)
    const even: RankWork = {
      attentionPairs: w.attentionPairs / dpSize,
      tokens: w.tokens / dpSize,
      numDecodes: w.numDecodes / dpSize,
      extendTokens: w.extendTokens / dpSize,
      numRequests: w.numRequests / dpSize,
      numExtends: w.numExtends / dpSize,
      kvReadPairs: share(w.kvReadPairs),
      denseKvReadPairs: share(w.denseKvReadPairs)
    }
    let seconds = model(Array.from({ length: dpSize }, () => even)).stepSeconds
    if (w.numExtends > 0 && dpSize > 1) {
      const e = w.extendTokens / w.numExtends
      const piece: RankWork = {
        attentionPairs: (e * (e + 1)) / 2,
        tokens: e,
        numDecodes: 0,
        extendTokens: e,
        numRequests: 1,
        numExtends: 1,
        kvReadPairs: sparseTopK === undefined ? undefined : cappedPairs(e, sparseTopK),
        denseKvReadPairs: sparseTopK === undefined ? undefined : extendKvReadTokens({ prefix: 0, tokens: e })
      }
      const idle: RankWork = {
        attentionPairs: 0,
        tokens: 0,
        numDecodes: 0,
        extendTokens: 0,
        numRequests: 0,
        numExtends: 0,
        kvReadPairs: sparseTopK === undefined ? undefined : 0,
        denseKvReadPairs: sparseTopK === undefined ? undefined : 0
      }
      const solo = model([piece, ...Array.from({ length: dpSize - 1 }, () => idle)]).stepSeconds
      if (solo > seconds) seconds = solo
    }
    return {
      stepSeconds: seconds,
      tokenImbalanceRatio: 1,
      ranks: [{ syncWaitSeconds: 0 }],
      syncWaitSeconds: [0]
    }
  }

/** Every request on rank 0: the pooled rank of the bound. */
const pooledRouter: Policy<null> = {
  name: BALANCE_BOUND,
  init: () => null,
  observe: (s) => s,
  route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: { scores: [0] } }),
  finish: (s) => s,
  setStatus: (s) => s
}

/**
 * The balance bound's group for `config`: one pooled rank holding the whole group's KV pool
 * (`dpSize` x `kvPoolTokens`, one prefix cache every request shares), running-request limit
 * (`dpSize` x `maxRunningRequests`) and prefill budget (`dpSize` x `chunkedPrefillTokens`, with
 * every decode on top and no request's chunk above one rank's `chunkedPrefillTokens`), mixing
 * decodes and prefill chunks in every step (whatever the engine: an SGLang group runs some ranks'
 * extends beside others' decodes in one lockstep step); each step charged by the bound step model
 * (the larger of a perfectly balanced split of its work over `dpSize` ranks and its largest
 * indivisible piece alone). The request limit (`maxRequestTokens`) stays the real group's, so the
 * same requests are refused. Front ends 1, prefill cadence off.
 *
 * @example
 * ```ts
 * import { balanceBoundConfig } from "@loadledger/sim"
 * const stepModel = () => ({ stepSeconds: 0.01, tokenImbalanceRatio: 1, ranks: [{ syncWaitSeconds: 0 }] })
 * const pooled = balanceBoundConfig({ dpSize: 4, kvPoolTokens: 100_000, maxRunningRequests: 64, stepModel })
 * ;[pooled.dpSize, pooled.kvPoolTokens, pooled.maxRunningRequests] // => [1, 400_000, 256]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const balanceBoundConfig = (config: SimConfig): SimConfig => {
  const r = resolveConfig(config)
  const dp = r.dpSize
  const pooled: PooledConfig = {
    ...config,
    dpSize: 1,
    lockstep: true,
    kvPoolTokens: r.kvPoolTokens * dp,
    maxRunningRequests: r.maxRunningRequests * dp,
    chunkedPrefillTokens: r.chunkedPrefillTokens * dp,
    maxRequestTokens: r.maxRequestTokens,
    frontEnds: 1,
    prefillIntervalSteps: 1,
    coordinatorRows: "extended",
    rankFaults: [], // the bound of the group's nominal hardware: a slow rank's fault is not pooled
    stepModel: boundStepModel(r.stepModel, dp, r.sparseTopK),
    [POOLED_CHUNK_TOKENS]: r.chunkedPrefillTokens
  }
  return pooled
}

/**
 * Replay `trace` on the balance bound of `config` (`balanceBoundConfig`): the same arrivals on an
 * idealised group where every step costs the least any placement of its work could give it, so
 * no routing policy's latencies, and no policy's goodput, can beat it. It is a bound, not a
 * policy: it ignores everything a router could know or not know (stale loads, cache locality:
 * the pooled rank's one prefix cache holds every rank's prefixes). Report a policy's goodput as a
 * share of it to see how much headroom routing has left. The law that every registered policy's
 * goodput stays at or below it is tested over the registry (packages/sim/test/Goodput.test.ts).
 *
 * @example
 * ```ts
 * import { simulateBound } from "@loadledger/sim"
 * const config = { dpSize: 4, stepModel: (ranks: ReadonlyArray<{ tokens: number }>) => ({ stepSeconds: 0.01 + 1e-5 * Math.max(...ranks.map((r) => r.tokens)), tokenImbalanceRatio: 1, ranks: ranks.map(() => ({ syncWaitSeconds: 0 })) }) }
 * const trace = Array.from({ length: 8 }, (_, i) => ({ requestId: `${i}`, arrivalSeconds: 0, inputLength: 1000, outputLength: 2 }))
 * const bound = simulateBound(config, trace)
 * bound.policy // => "balance-bound"
 * bound.requests.finished // => 8
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const simulateBound = (
  config: SimConfig,
  trace: ReadonlyArray<TraceRequest>,
  options: SimulateOptions = {}
): PolicyResult =>
  simulate(
    balanceBoundConfig(config),
    trace,
    { name: BALANCE_BOUND, make: () => pooledRouter as Policy<unknown> },
    options
  )

/** The clairvoyant router's state: per rank, the known work of its unfinished requests; who holds what. */
interface ClairvoyantState {
  readonly work: ReadonlyArray<number>
  readonly count: ReadonlyArray<number>
  readonly held: HashMap.HashMap<string, { readonly rank: number; readonly work: number }>
  readonly healthy: ReadonlyArray<boolean>
}

/**
 * A clairvoyant routing policy for `trace`: it knows every request's output length (read from the
 * trace, which no real router has) and places each request on the healthy rank whose unfinished
 * requests hold the least known work, counting a request's work as its prompt plus its whole
 * output (`inputLength + outputLength` tokens: the KV it will hold at its end and the decode steps
 * it will take), lowest rank on ties; a request leaves its rank's count when it finishes. It reads
 * no published load: what it knows is exact. An achievable reference between the registered
 * policies and the balance bound. A request not in `trace` counts its prompt alone.
 *
 * @example
 * ```ts
 * import { clairvoyantPolicy } from "@loadledger/sim"
 * const trace = [
 *   { requestId: "long", arrivalSeconds: 0, inputLength: 10, outputLength: 1000 },
 *   { requestId: "short", arrivalSeconds: 0, inputLength: 500, outputLength: 1 }
 * ]
 * const p = clairvoyantPolicy(trace).make({})
 * const a = p.route(p.init(2), { requestId: "long", inputLength: 10 }, 0)
 * const b = a._tag === "Routed" ? p.route(a.state, { requestId: "short", inputLength: 500 }, 0) : a
 * a._tag === "Routed" && b._tag === "Routed" && [a.rank, b.rank] // => [0, 1]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const clairvoyantPolicy = (trace: ReadonlyArray<TraceRequest>): SimPolicy => {
  const known = new Map<string, number>()
  for (const t of trace) known.set(t.requestId, t.inputLength + t.outputLength)
  const policy: Policy<ClairvoyantState> = {
    name: "clairvoyant",
    init: (dpSize) => ({
      work: new Array<number>(dpSize).fill(0),
      count: new Array<number>(dpSize).fill(0),
      held: HashMap.empty(),
      healthy: new Array<boolean>(dpSize).fill(true)
    }),
    observe: (s) => s,
    route: (s, request: RouteRequest) => {
      let best = -1
      for (let i = 0; i < s.work.length; i++)
        if (
          s.healthy[i] &&
          (best < 0 ||
            s.count[i]! < s.count[best]! ||
            (s.count[i] === s.count[best] && s.work[i]! < s.work[best]!))
        )
          best = i
      if (best < 0)
        return {
          _tag: "PolicyError",
          reason: "AllRanksUnavailable",
          message: "no healthy rank",
          state: s
        }
      const w = known.get(request.requestId) ?? request.inputLength
      const work = s.work.slice()
      work[best] = work[best]! + w
      const count = s.count.slice()
      count[best] = count[best]! + 1
      return {
        _tag: "Routed",
        rank: best,
        state: { ...s, work, count, held: HashMap.set(s.held, request.requestId, { rank: best, work: w }) },
        explanation: { scores: s.work }
      }
    },
    finish: (s, ids) => {
      let work: Array<number> | undefined
      let count: Array<number> | undefined
      let held = s.held
      for (const id of ids) {
        const h = HashMap.get(held, id)
        if (Option.isNone(h)) continue
        work ??= s.work.slice()
        count ??= s.count.slice()
        work[h.value.rank] = work[h.value.rank]! - h.value.work
        count[h.value.rank] = count[h.value.rank]! - 1
        held = HashMap.remove(held, id)
      }
      return work === undefined || count === undefined ? s : { ...s, work, count, held }
    },
    setStatus: (s, status) =>
      Array.isArray(status) && status.length === s.work.length && status.every((x) => typeof x === "boolean")
        ? { ...s, healthy: status }
        : s
  }
  return { name: "clairvoyant", make: () => policy as Policy<unknown> }
}
