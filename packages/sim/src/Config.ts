/**
 * Simulator configuration.
 *
 * @since 0.1.0
 */

import type { ConfigProblem, EngineModel, EngineOption } from "./engines/Engine.js"
import { type EngineName, engines, findEngine } from "./engines/index.js"
import type { CoordinatorRows } from "./engines/vllm/options.js"
import type { VllmWaveProfile } from "./engines/vllm/VllmWaveTypes.js"
import { checkRankFaults, type RankFault } from "./faults/RankFaults.js"
import { bad, integerAtLeast } from "./internal/configChecks.js"
import { checkSlo, type Slo } from "./Slo.js"
import type { StepModel } from "./StepModel.js"

/**
 * Everything a simulation run depends on besides the trace and the policy.
 *
 * - `engine`: `sglang` (a rank runs either an extend batch or a decode batch; schedulers publish
 *   load snapshots at their step boundaries, which the policy receives through `observe`; the
 *   SGLang policies refresh their ledger from them at most every 20 ms on arrival, sglang
 *   `data_parallel_controller.py`) or `vllm` (mixed batches under one token budget; engines send
 *   stats to the coordinator at each step boundary, and the coordinator, `vllmCoordHandle` /
 *   `vllmCoordAdvance` from @loadledger/policies, publishes to every front end on its own cadence:
 *   `coordinatorIntervalSeconds` after a change, a 5 s heartbeat, a 50 ms minimum wait and
 *   step-boundary snapshots in wave mode; each front end keeps its own in-flight counts; lockstep
 *   groups run in waves decided by `vllmWaveStep` with `vllmWaveProfile`, vllm
 *   `v1/engine/coordinator.py` and `v1/engine/core.py` @00080ee1). Default: the policy's own
 *   engine when it names one (`SimPolicy.engine`: a registry entry's, `vllm` for vLLM's
 *   balancer), else `sglang`.
 * - `lockstep`: all ranks step together (DP attention + EP); false gives each rank its own steps.
 * - `kvPoolTokens`: KV pool per rank, in tokens (prefix-cache blocks count against it).
 * - `sparseTopK`: the model's sparse-attention cap on keys read per query (DSA), if any.
 * - `chunkedPrefillTokens`: SGLang `--chunked-prefill-size` / vLLM `max_num_batched_tokens`.
 * - `frontEnds`: vLLM API-server processes (each its own policy state); SGLang always has one (the
 *   field is not read with the SGLang engine).
 * - `maxRequestTokens`: the engine's request limit (SGLang `--context-length`, vLLM
 *   `max_model_len`): a request whose input + output exceed it is rejected on arrival. Default: the
 *   KV pool, so every accepted request fits an empty rank. Set it above `kvPoolTokens` to model an
 *   engine that accepts requests its KV pool cannot hold: such a request blocks its rank's queue.
 * - `dummyBatches`: whether a rank with an empty batch runs a dummy forward in a lockstep step
 *   (default true: SGLang pads an idle DP-attention rank with an IDLE-mode batch, `get_idle_batch`
 *   in `prepare_mlp_sync_batch`, sglang `python/sglang/srt/managers/scheduler.py`; vLLM runs
 *   `execute_dummy_batch` in `DPEngineCoreProc.run_busy_loop`, vllm `v1/engine/core.py`
 *   @00080ee1). False: the forward veto — a lockstep group's forward runs only when
 *   every rank has a non-empty batch; otherwise no rank runs, the ranks that formed a batch keep it
 *   and the group waits for the next arrival (see `simulate` for the step rule).
 * - `prefillIntervalSteps`: vLLM's `--prefill-schedule-interval` (default 1: off): prefills
 *   (admissions and chunks in progress) run only on steps whose group step counter is a multiple
 *   of it; other steps run decodes only, unless the rank's last prefill-admitting step left
 *   requests waiting (saturation guard) or it has nothing to decode. The counter restarts at 0
 *   when the group goes idle (vLLM: at each new wave), so prefills after idle start at once.
 *   vllm `v1/engine/core.py` `DPEngineCoreProc._should_throttle_prefills` and
 *   `v1/core/sched/scheduler.py` `Scheduler.schedule` (`defer_prefills`, `prefill_capacity_bound`).
 *   vLLM engine only: SGLang has no such option, and `checkConfig` refuses a value other than 1
 *   on the SGLang engine (field `prefillIntervalSteps`) instead of ignoring it.
 * - `stallSteps`: no-progress bound: a rank that holds requests and forms an empty batch in this
 *   many consecutive step attempts ends the run with `NoProgress` naming it and the cause
 *   (default 16).
 * - `faults.zeroTokenRanksReturnEarly`: ranks with no tokens skip the dummy forward (vllm PR #51984).
 * - `recordSteps` / `recordRequests` / `recordPublishes`: keep a per-step log (`"loads"`: with each
 *   rank's load and sync wait, since 0.6.0) / per-request
 *   outcomes / the vLLM coordinator's publishes in the result.
 * - `coordinatorRows` (vLLM engine only): which fields the vLLM front ends' rows carry, see
 *   {@link CoordinatorRows} (default `"extended"`).
 * - `slo` (since 0.5.0): judge every request against this latency SLO; the result then carries
 *   `slo` ({@link SloAttainment}: exact counts, not quantiles). `sloStopEarly`: end the run as soon
 *   as more requests have missed the SLO than its target allows (a hopeless goodput probe; the
 *   status is then `SloMissed` and the attainment an upper bound). Default false.
 * - `rankFaults` (since 0.6.0): per-rank speed faults (a slow GPU, a per-step CPU overhead), see
 *   {@link RankFault} and `applyRankFaults`. Default none.
 *
 * @category config
 * @since 0.1.0
 */
export interface SimConfig {
  readonly dpSize: number
  readonly stepModel: StepModel
  readonly engine?: EngineName | undefined
  readonly lockstep?: boolean | undefined
  readonly expertParallel?: boolean | undefined
  readonly maxRunningRequests?: number | undefined
  readonly chunkedPrefillTokens?: number | undefined
  readonly kvPoolTokens?: number | undefined
  readonly sparseTopK?: number | undefined
  readonly coordinatorIntervalSeconds?: number | undefined
  readonly vllmWaveProfile?: VllmWaveProfile | undefined
  readonly frontEnds?: number | undefined
  readonly seed?: number | undefined
  readonly maxSimulatedSeconds?: number | undefined
  readonly loadSamples?: number | undefined
  readonly maxRequestTokens?: number | undefined
  readonly dummyBatches?: boolean | undefined
  readonly prefillIntervalSteps?: number | undefined
  readonly stallSteps?: number | undefined
  readonly faults?: { readonly zeroTokenRanksReturnEarly?: boolean | undefined } | undefined
  readonly recordSteps?: boolean | "loads" | undefined
  readonly recordRequests?: boolean | undefined
  readonly recordPublishes?: boolean | undefined
  readonly coordinatorRows?: CoordinatorRows | undefined
  readonly slo?: Slo | undefined
  readonly sloStopEarly?: boolean | undefined
  readonly rankFaults?: ReadonlyArray<RankFault> | undefined
}

/**
 * `SimConfig` with every default filled in.
 *
 * @category config
 * @since 0.1.0
 */
export type ResolvedSimConfig = Required<
  Omit<SimConfig, "maxSimulatedSeconds" | "faults" | "sparseTopK" | "slo">
> & {
  readonly sparseTopK: number | undefined
  readonly slo: Slo | undefined
  readonly maxSimulatedSeconds: number
  readonly faults: { readonly zeroTokenRanksReturnEarly: boolean }
}

/**
 * Defaults: SGLang engine, lockstep with EP, 64 running requests per rank, 8,192-token chunks
 * (a common `--chunked-prefill-size`; not checked against an SGLang release), a 280,000-token KV pool (about
 * `kvPoolTokensFor(models["glm-5.3"], gpus["h200"])`), 100 ms
 * coordinator cadence and the verified 32-step finish-sync profile (vLLM @00080ee1), one front end,
 * seed 0, request limit = KV pool, dummy batches on, no prefill cadence, 16 stall steps.
 *
 * @example
 * ```ts
 * import { resolveConfig } from "@loadledger/sim"
 * const c = resolveConfig({ dpSize: 8, stepModel: () => ({ stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [] }) })
 * c.chunkedPrefillTokens // => 8192
 * c.engine // => "sglang"
 * c.prefillIntervalSteps // => 1
 * c.dummyBatches // => true
 * c.coordinatorRows // => "extended"
 * ```
 *
 * @category config
 * @since 0.1.0
 */
export const resolveConfig = (c: SimConfig): ResolvedSimConfig => {
  const engine = c.engine ?? engines[0].name
  const common = {
    dpSize: c.dpSize,
    stepModel: c.stepModel,
    engine,
    lockstep: c.lockstep ?? true,
    expertParallel: c.expertParallel ?? true,
    maxRunningRequests: c.maxRunningRequests ?? 64,
    chunkedPrefillTokens: c.chunkedPrefillTokens ?? 8192,
    kvPoolTokens: c.kvPoolTokens ?? 280_000,
    sparseTopK: c.sparseTopK,
    seed: c.seed ?? 0,
    maxSimulatedSeconds: c.maxSimulatedSeconds ?? Number.POSITIVE_INFINITY,
    loadSamples: c.loadSamples ?? 200,
    maxRequestTokens: c.maxRequestTokens ?? c.kvPoolTokens ?? 280_000,
    dummyBatches: c.dummyBatches ?? true,
    stallSteps: c.stallSteps ?? 16,
    faults: { zeroTokenRanksReturnEarly: c.faults?.zeroTokenRanksReturnEarly ?? false },
    recordSteps: c.recordSteps ?? false,
    recordRequests: c.recordRequests ?? false,
    recordPublishes: c.recordPublishes ?? false,
    slo: c.slo,
    sloStopEarly: c.sloStopEarly ?? false,
    rankFaults: c.rankFaults ?? []
  }
  // every engine's own options, defaulted; forced on an engine that does not declare them
  const own: Record<string, unknown> = {}
  const given = c as unknown as Readonly<Record<string, unknown>>
  const current = findEngine(engine)
  for (const o of engineOptions(current)) {
    const declared = current?.options.includes(o) === true
    own[o.field] =
      !declared && o.elsewhere.rule === "forced" ? o.elsewhere.value : (given[o.field] ?? o.defaultValue)
  }
  return { ...common, ...own } as ResolvedSimConfig
}

/**
 * Every registered engine's options, one per field: `engine`'s own declaration of a field, else the
 * first engine's that declares it (registry order).
 */
const engineOptions = (engine: EngineModel | undefined): ReadonlyArray<EngineOption> => {
  const byField = new Map<string, EngineOption>()
  for (const e of engines)
    for (const o of e.options) if (!byField.has(o.field) || e === engine) byField.set(o.field, o)
  return [...byField.values()]
}

/**
 * Check every field of a resolved config: `dpSize` must be an integer from 1 to 4,096 (a DP group
 * of today is at most a few hundred ranks; a run's cost grows faster than its rank count: 4,096
 * ranks took 1.8 s and 0.5 GB for five requests, 100,000 ran out of memory); `maxRunningRequests`,
 * `chunkedPrefillTokens`, `kvPoolTokens`, `maxRequestTokens`, `prefillIntervalSteps`, `stallSteps`
 * and `frontEnds` (used with the vLLM engine only) must be integers >= 1, `sparseTopK` too when
 * set; `loadSamples` an integer >= 0; `seed` a safe integer; `coordinatorIntervalSeconds` a finite
 * number > 0;
 * `maxSimulatedSeconds` a number > 0 (`Infinity`: no limit); `stepModel` a function; `engine`
 * `"sglang"` or `"vllm"`; `lockstep`, `expertParallel` and `dummyBatches` booleans;
 * `vllmWaveProfile` a profile whose `syncInterval` is an integer >= 1; `faults` an object;
 * `coordinatorRows` one of {@link CoordinatorRows}, and `"extended"` unless the engine is vLLM;
 * `prefillIntervalSteps` 1 unless the engine is vLLM (SGLang has no prefill schedule interval).
 * Returns the first bad field with a message naming it and the value, or `undefined` when all are
 * valid. `simulate` checks first and reports a bad field as an `InvalidConfig` status, running
 * nothing (since 0.4.0 for every field: a `dpSize` of 1.5 used to throw `RangeError` from inside,
 * a `dpSize` of 0 or a `maxRunningRequests` of NaN to complete a run that modelled nothing).
 *
 * **When to use**: before a long run, to fail fast on a config typed by hand.
 *
 * @example
 * ```ts
 * import { checkConfig, resolveConfig } from "@loadledger/sim"
 * const stepModel = () => ({ stepSeconds: 0.03, tokenImbalanceRatio: 1, ranks: [] })
 * checkConfig(resolveConfig({ dpSize: 8, stepModel })) // => undefined
 * checkConfig(resolveConfig({ dpSize: 8, stepModel, prefillIntervalSteps: 0 }))?.field // => "prefillIntervalSteps"
 * checkConfig(resolveConfig({ dpSize: 8, stepModel, engine: "vllm", prefillIntervalSteps: 2 })) // => undefined
 * checkConfig(resolveConfig({ dpSize: 8, stepModel, prefillIntervalSteps: 2 }))?.field // => "prefillIntervalSteps"
 * checkConfig(resolveConfig({ dpSize: 8, stepModel, engine: "vllm", coordinatorRows: "vllm" })) // => undefined
 * checkConfig(resolveConfig({ dpSize: 8, stepModel, coordinatorRows: "vllm" }))?.field // => "coordinatorRows"
 * checkConfig(resolveConfig({ dpSize: 1.5, stepModel }))?.message // => "dpSize must be an integer from 1 to 4096, got 1.5"
 * ```
 *
 * @category config
 * @since 0.2.0
 */
export const checkConfig = (c: ResolvedSimConfig): ConfigProblem | undefined => {
  const boolean = (field: keyof ResolvedSimConfig): ConfigProblem | undefined =>
    typeof c[field] === "boolean" ? undefined : bad(field, "true or false", c[field])
  const atLeast1 = (
    ["maxRunningRequests", "chunkedPrefillTokens", "kvPoolTokens", "maxRequestTokens", "stallSteps"] as const
  )
    .map((f) => integerAtLeast(f, c[f], 1))
    .find((p) => p !== undefined)
  const engine = findEngine(c.engine)
  return (
    (Number.isSafeInteger(c.dpSize) && c.dpSize >= 1 && c.dpSize <= MAX_DP_SIZE
      ? undefined
      : bad("dpSize", `an integer from 1 to ${MAX_DP_SIZE}`, c.dpSize)) ??
    (engine !== undefined ? undefined : bad("engine", engineRule, c.engine)) ??
    (typeof c.stepModel === "function" ? undefined : bad("stepModel", "a function", c.stepModel)) ??
    atLeast1 ??
    (c.sparseTopK === undefined ? undefined : integerAtLeast("sparseTopK", c.sparseTopK, 1)) ??
    integerAtLeast("loadSamples", c.loadSamples, 0) ??
    (Number.isSafeInteger(c.seed) ? undefined : bad("seed", "a safe integer", c.seed)) ??
    (c.maxSimulatedSeconds > 0
      ? undefined
      : bad("maxSimulatedSeconds", "a number > 0", c.maxSimulatedSeconds)) ??
    boolean("lockstep") ??
    boolean("expertParallel") ??
    boolean("dummyBatches") ??
    (typeof c.faults === "object" &&
    c.faults !== null &&
    typeof c.faults.zeroTokenRanksReturnEarly === "boolean"
      ? undefined
      : bad("faults", "{ zeroTokenRanksReturnEarly?: boolean }", c.faults)) ??
    checkEngineOptions(c, engine!) ??
    boolean("sloStopEarly") ??
    checkSloField(c.slo) ??
    checkRankFaults(c.rankFaults, c.dpSize)
  )
}

/** `"sglang" or "vllm"` (every registered name, quoted). */
const engineRule = engines
  .map((e) => JSON.stringify(e.name))
  .join(", ")
  .replace(/, ([^,]*)$/, " or $1")

/**
 * The engines' own options: each value follows its rule (whatever the engine, as every field
 * does), then an option `engine` does not declare keeps the value its declaring engine requires
 * elsewhere (`EngineOption.elsewhere`).
 */
const checkEngineOptions = (c: ResolvedSimConfig, engine: EngineModel): ConfigProblem | undefined => {
  const values = c as unknown as Readonly<Record<string, unknown>>
  const options = engineOptions(engine)
  for (const o of options) {
    const p = o.check(values[o.field])
    if (p !== undefined) return p
  }
  for (const o of options) {
    const v = values[o.field]
    if (o.elsewhere.rule === "refused" && !engine.options.includes(o) && v !== o.elsewhere.value)
      return { field: o.field, message: o.elsewhere.message(v, engine) }
  }
  return undefined
}

const checkSloField = (slo: Slo | undefined): ConfigProblem | undefined => {
  if (slo === undefined) return undefined
  const e = checkSlo(slo)
  return e === undefined
    ? undefined
    : { field: e.field === "slo" ? "slo" : `slo.${e.field}`, message: e.message }
}

/**
 * The largest `dpSize` `checkConfig` accepts (a DP group of today is at most a few hundred ranks).
 *
 * **When to use**: to check a rank count up front, before a trace is read (the CLI's `--dp`).
 *
 * @example
 * ```ts
 * import { MAX_DP_SIZE } from "@loadledger/sim"
 * MAX_DP_SIZE // => 4096
 * ```
 *
 * @category config
 * @since 0.5.0
 */
export const MAX_DP_SIZE = 4096
