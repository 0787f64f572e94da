/**
 * The step cost model of `step-time-aware`: six linear coefficients, fitted from any step-time function.
 *
 * @since 0.4.0
 */

/**
 * One rank's share of a step, as `@loadledger/step-time`'s `RankAggregate` (per layer
 * `attentionPairs`; per step `tokens`, `numDecodes`, `extendTokens`, `numExtends`).
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepProbeRank {
  readonly attentionPairs: number
  readonly tokens: number
  readonly numDecodes: number
  readonly extendTokens: number
  readonly numExtends: number
}

/**
 * Seconds of one lockstep step whose ranks (one entry each) run the given batches, e.g.
 * `(ranks) => stepTimeFromAggregates(config, ranks)` of `@loadledger/step-time`.
 *
 * @category own policies
 * @since 0.4.0
 */
export type StepTimeFunction = (ranks: ReadonlyArray<StepProbeRank>) => { readonly stepSeconds: number }

/**
 * The step cost model of `step-time-aware`, in seconds. A prefill runs in chunks of at most
 * `chunkTokens` (SGLang `--chunked-prefill-size`, vLLM `max_num_batched_tokens`), one per step; the
 * step running a chunk of `e` tokens after `q` cached ones lasts `extendStepSeconds +
 * extendSecondsPerToken * e + extendSecondsPerTokenPerPrefixToken * e * q` (the intercept includes the
 * step's decode and collectives). A decode batch costs the rank `decodeSecondsPerRequest * requests +
 * decodeSecondsPerContextToken * contextTokens`. Coefficients finite and >= 0; `chunkTokens` a positive
 * integer.
 *
 * @category own policies
 * @since 0.4.0
 */
export interface StepCostModel {
  readonly chunkTokens: number
  readonly extendStepSeconds: number
  readonly extendSecondsPerToken: number
  readonly extendSecondsPerTokenPerPrefixToken: number
  readonly decodeSecondsPerRequest: number
  readonly decodeSecondsPerContextToken: number
}

/**
 * GLM-5.3 (DeepSeek sparse attention) on H200, DP 8, 8,192-token chunks: {@link stepCostFrom} of
 * `@loadledger/step-time`'s `glm-5.3` / `h200` presets (refitted by `own-steptime.test.ts`); the
 * default of `makeStepTimeAware`. **When to use**: a GLM-5.3-class MoE with DP attention on Hopper.
 *
 * @example
 * ```ts
 * import { glm53H200StepCost } from "@loadledger/policies"
 * glm53H200StepCost.chunkTokens // => 8192
 * // a step running an 8,192-token chunk after an empty cache lasts about 0.36 s
 * const chunk = glm53H200StepCost.extendStepSeconds + 8192 * glm53H200StepCost.extendSecondsPerToken
 * chunk > 0.35 && chunk < 0.37 // => true
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const glm53H200StepCost: StepCostModel = {
  chunkTokens: 8192,
  extendStepSeconds: 0.0283,
  extendSecondsPerToken: 3.99e-5,
  extendSecondsPerTokenPerPrefixToken: 7.32e-10,
  decodeSecondsPerRequest: 1.08e-4,
  decodeSecondsPerContextToken: 3.06e-9
}

const probe = (requests: number, context: number, extend: number, prefix: number): StepProbeRank => ({
  attentionPairs: extend > 0 ? prefix * extend + (extend * (extend + 1)) / 2 : requests * context,
  tokens: extend > 0 ? extend : requests,
  numDecodes: extend > 0 ? 0 : requests,
  extendTokens: extend,
  numExtends: extend > 0 ? 1 : 0
})
const nonNegative = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0)
/** Three significant digits: finite differences of step times carry no more. */
const fitted = (x: number): number => Number(nonNegative(x).toPrecision(3))

/**
 * Fit a {@link StepCostModel} by probing a step-time function (seven calls: fit once): over a
 * baseline of `dpSize` (8) ranks decoding `decodeRequests` (16) of `contextTokens` (8,192), rank 0
 * runs extends of 1,024 and `chunkTokens` (8,192) tokens, and of `chunkTokens` after `prefixTokens`
 * (65,536), or decodes twice the requests or context; the coefficients are the intercept and finite
 * differences (negative: 0) to three significant digits (why: docs/own-policies.md).
 *
 * **When to use**: to give `makeStepTimeAware` your model and GPU.
 *
 * @example
 * ```ts
 * import { stepCostFrom } from "@loadledger/policies"
 * import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
 * const config = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
 * const cost = stepCostFrom((ranks) => stepTimeFromAggregates(config, ranks))
 * cost.chunkTokens // => 8192
 * // later chunks of a long prompt run slower (the sparse-attention indexer scans the prefix)
 * cost.extendSecondsPerTokenPerPrefixToken > 0 // => true
 * // a toy step-time function: 10 ms per step plus 1 us per token on the busiest rank
 * const toy = stepCostFrom((ranks) => ({ stepSeconds: 0.01 + 1e-6 * Math.max(...ranks.map((r) => r.tokens)) }))
 * toy.extendSecondsPerToken // => 1e-6
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const stepCostFrom = (
  stepTime: StepTimeFunction,
  options: {
    readonly dpSize?: number | undefined
    readonly chunkTokens?: number | undefined
    readonly decodeRequests?: number | undefined
    readonly contextTokens?: number | undefined
    readonly prefixTokens?: number | undefined
  } = {}
): StepCostModel => {
  const n = Math.max(1, options.dpSize ?? 8)
  const chunk = Math.max(1, options.chunkTokens ?? 8192)
  const d = Math.max(1, options.decodeRequests ?? 16)
  const c = Math.max(1, options.contextTokens ?? 8192)
  const p = Math.max(1, options.prefixTokens ?? 65_536)
  const small = Math.min(1024, Math.max(1, Math.floor(chunk / 8)))
  const base = probe(d, c, 0, 0)
  const step = (rank0: StepProbeRank) =>
    stepTime([rank0, ...Array.from({ length: n - 1 }, () => base)]).stepSeconds
  const t0 = step(base)
  const tSmall = step(probe(0, 0, small, 0))
  const tChunk = step(probe(0, 0, chunk, 0))
  const perToken = chunk > small ? nonNegative((tChunk - tSmall) / (chunk - small)) : 0
  return {
    chunkTokens: chunk,
    extendStepSeconds: fitted(tSmall - perToken * small),
    extendSecondsPerToken: fitted(perToken),
    extendSecondsPerTokenPerPrefixToken: fitted((step(probe(0, 0, chunk, p)) - tChunk) / (chunk * p)),
    decodeSecondsPerRequest: fitted((step(probe(2 * d, c, 0, 0)) - t0) / d),
    decodeSecondsPerContextToken: fitted((step(probe(d, 2 * c, 0, 0)) - t0) / (d * c))
  }
}

/**
 * Seconds a rank's prefill of `tokens` prompt tokens after `prefixTokens` cached ones adds to the
 * lockstep group, chunk by chunk as `model` prices them, in closed form (0 for no tokens).
 * **When to use**: to price a placement in seconds (`step-time-aware`'s prefill terms).
 *
 * @example
 * ```ts
 * import { glm53H200StepCost, prefillSeconds } from "@loadledger/policies"
 * prefillSeconds(glm53H200StepCost, 0, 0) // => 0
 * // two chunks of 8,192: the second runs after 8,192 tokens of prefix
 * prefillSeconds(glm53H200StepCost, 16384, 0) > 2 * prefillSeconds(glm53H200StepCost, 8192, 0) // => true
 * ```
 *
 * @category own policies
 * @since 0.4.0
 */
export const prefillSeconds = (model: StepCostModel, tokens: number, prefixTokens: number): number => {
  if (!(tokens > 0)) return 0
  const k = model.chunkTokens
  const full = Math.floor(tokens / k)
  const rest = tokens - full * k
  // sum over chunks of e_i * q_i, q_i the prefix before chunk i: full chunks start at p + i k
  const prefixPairs =
    k * (full * prefixTokens + (k * full * (full - 1)) / 2) + rest * (prefixTokens + full * k)
  return (
    (full + (rest > 0 ? 1 : 0)) * model.extendStepSeconds +
    tokens * model.extendSecondsPerToken +
    prefixPairs * model.extendSecondsPerTokenPerPrefixToken
  )
}
