/**
 * Simulator configuration.
 *
 * @since 0.1.0
 */

import type { ResolvedSimConfig, SimConfig } from "./ConfigTypes.js"
import type { ConfigProblem, EngineModel, EngineOption } from "./engines/Engine.js"
import { engines, findEngine } from "./engines/index.js"
import { checkRankFaults } from "./faults/RankFaults.js"
import { bad, integerAtLeast } from "./internal/configChecks.js"
import { checkSlo, type Slo } from "./Slo.js"

/**
 * `SimConfig` (everything a run depends on besides the trace and the policy) and
 * `ResolvedSimConfig` (every default filled in), defined in the leaf `ConfigTypes.ts`.
 *
 * @example
 * ```ts
 * import type { SimConfig } from "@loadledger/sim"
 * const engine: SimConfig["engine"] = "trtllm"
 * engine // => "trtllm"
 * ```
 *
 * @category config
 * @since 0.1.0
 */
export type { ResolvedSimConfig, SimConfig } from "./ConfigTypes.js"

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
    maxConcurrency: c.maxConcurrency,
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
    (c.maxConcurrency === undefined ? undefined : integerAtLeast("maxConcurrency", c.maxConcurrency, 1)) ??
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
