/**
 * What a rank's work adds to a lockstep DP step, as a few linear coefficients a router can
 * evaluate in nanoseconds: the cost model of the `step-time-aware` policy, fitted from any
 * step-time function (for example `@loadledger/step-time`'s `stepTimeFromAggregates`).
 *
 * @since 0.4.0
 */

/**
 * One rank's share of a step, as a step-time function reads it. The field names are those of
 * `@loadledger/step-time`'s `RankAggregate` (per layer: `attentionPairs`; per step: `tokens`,
 * `numDecodes`, `extendTokens`, `numExtends`), so `stepTimeFromAggregates` can be probed as it is.
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
 * A step-time function: the duration in seconds of one lockstep step whose ranks run the given
 * batches (one entry per rank). `@loadledger/step-time`'s `stepTimeFromAggregates(config, ranks)`
 * returns an object with `stepSeconds`; wrap it as `(ranks) => stepTimeFromAggregates(config, ranks)`.
 *
 * @category own policies
 * @since 0.4.0
 */
export type StepTimeFunction = (ranks: ReadonlyArray<StepProbeRank>) => { readonly stepSeconds: number }

/**
 * The step cost model of the `step-time-aware` policy, in seconds. A rank's prefill of `u`
 * prompt tokens after a cached prefix of `p` runs in chunks of at most `chunkTokens`, one per
 * lockstep step; the step that runs a chunk of `e` tokens after `q` tokens already in the rank's
 * KV cache lasts `extendStepSeconds + extendSecondsPerToken * e +
 * extendSecondsPerTokenPerPrefixToken * e * q` (`extendStepSeconds` includes the step's decode
 * and collective work: even a one-token prompt takes a step). A rank's decode batch costs the step
 * `decodeSecondsPerRequest * requests + decodeSecondsPerContextToken * contextTokens` (its local
 * time; the step waits for the slowest rank). Every coefficient is finite and non-negative;
 * `chunkTokens` is a positive integer (SGLang `--chunked-prefill-size`, vLLM
 * `max_num_batched_tokens`).
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
 * The cost model of GLM-5.3 (DeepSeek sparse attention) on H200, DP 8, 8,192-token chunks:
 * what {@link stepCostFrom} fits from `@loadledger/step-time`'s `stepTimeFromAggregates` with its
 * `glm-5.3` and `h200` presets (the test `own-steptime.test.ts` refits it and compares), rounded
 * to three significant digits. The default of `makeStepTimeAware`.
 *
 * **When to use**: as the cost model of a GLM-5.3-class MoE with DP attention on Hopper GPUs, or
 * as a starting point; fit your own with {@link stepCostFrom}.
 *
 * @example
 * ```ts
 * import { glm53H200StepCost } from "@loadledger/policies"
 * glm53H200StepCost.chunkTokens // => 8192
 * // a step that runs an 8,192-token chunk after an empty cache lasts about 0.36 s
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

/** A decode batch of `requests` requests of `context` tokens each. */
const decodeRank = (requests: number, context: number): StepProbeRank => ({
  attentionPairs: requests * context,
  tokens: requests,
  numDecodes: requests,
  extendTokens: 0,
  numExtends: 0
})

/** One extend chunk of `tokens` after `prefix` cached tokens. */
const extendRank = (tokens: number, prefix: number): StepProbeRank => ({
  attentionPairs: prefix * tokens + (tokens * (tokens + 1)) / 2,
  tokens,
  numDecodes: 0,
  extendTokens: tokens,
  numExtends: 1
})

const nonNegative = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0)
/** Three significant digits (finite differences of step times carry no more). */
const fitted = (x: number): number => Number(nonNegative(x).toPrecision(3))

/**
 * Fit a {@link StepCostModel} from a step-time function by probing it: a group of `dpSize` ranks
 * each decoding `decodeRequests` requests of `contextTokens` tokens is the baseline; rank 0 then
 * runs an extend of 1,024 and of `chunkTokens` tokens after an empty cache and of `chunkTokens`
 * after `prefixTokens`, or decodes twice the requests, or twice the context. `extendStepSeconds`
 * is the intercept of the extend steps' line (the whole step's fixed part); the other
 * coefficients are finite differences of the step times (negative values count 0), each rounded
 * to three significant digits: finite differences of step times carry no more, and one fit then
 * gives the same coefficients wherever it is made (the simulator fits the policy's from its own
 * step model; {@link glm53H200StepCost} is this fit for GLM-5.3 on H200). Placements near a tie
 * do depend on the digits: in the simulator a 0.1-0.3% change of every coefficient moved
 * single-cell TTFT p99 by up to 22 points behind one SGLang controller.
 *
 * **When to use**: to give `makeStepTimeAware` the cost model of your model and GPU, from
 * `@loadledger/step-time` or a measured step-time table. Probing calls the function seven times;
 * do it once, not per route.
 *
 * Defaults: `dpSize` 8, `chunkTokens` 8192, `decodeRequests` 16, `contextTokens` 8192,
 * `prefixTokens` 65,536.
 *
 * @example
 * ```ts
 * import { stepCostFrom } from "@loadledger/policies"
 * import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
 * const config = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
 * const cost = stepCostFrom((ranks) => stepTimeFromAggregates(config, ranks))
 * cost.chunkTokens // => 8192
 * // the prefix term: later chunks of a long prompt run slower (the sparse-attention indexer scans the prefix)
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
  const base = decodeRank(d, c)
  const step = (rank0: StepProbeRank) =>
    stepTime([rank0, ...Array.from({ length: n - 1 }, () => base)]).stepSeconds
  const t0 = step(base)
  const tSmall = step(extendRank(small, 0))
  const tChunk = step(extendRank(chunk, 0))
  const tPrefix = step(extendRank(chunk, p))
  const perToken = chunk > small ? nonNegative((tChunk - tSmall) / (chunk - small)) : 0
  return {
    chunkTokens: chunk,
    extendStepSeconds: fitted(tSmall - perToken * small),
    extendSecondsPerToken: fitted(perToken),
    extendSecondsPerTokenPerPrefixToken: fitted((tPrefix - tChunk) / (chunk * p)),
    decodeSecondsPerRequest: fitted((step(decodeRank(2 * d, c)) - t0) / d),
    decodeSecondsPerContextToken: fitted((step(decodeRank(d, 2 * c)) - t0) / (d * c))
  }
}

/**
 * Seconds a rank's prefill of `tokens` prompt tokens after `prefixTokens` cached ones adds to the
 * lockstep group under `model`: chunk by chunk, each chunk priced as {@link StepCostModel} says.
 * O(1): the chunks' sum is taken in closed form. 0 for no tokens.
 *
 * **When to use**: to price a placement in seconds (the `step-time-aware` policy's prefill term).
 *
 * @example
 * ```ts
 * import { glm53H200StepCost, prefillSeconds } from "@loadledger/policies"
 * prefillSeconds(glm53H200StepCost, 0, 0) // => 0
 * // two chunks of 8,192: the second runs after 8,192 tokens of prefix
 * const t = prefillSeconds(glm53H200StepCost, 16384, 0)
 * t > 2 * prefillSeconds(glm53H200StepCost, 8192, 0) // => true
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
  const chunks = full + (rest > 0 ? 1 : 0)
  // sum over chunks of e_i * q_i, q_i the prefix before chunk i: full chunks start at p + i k
  const prefixPairs =
    k * (full * prefixTokens + (k * full * (full - 1)) / 2) + rest * (prefixTokens + full * k)
  return (
    chunks * model.extendStepSeconds +
    tokens * model.extendSecondsPerToken +
    prefixPairs * model.extendSecondsPerTokenPerPrefixToken
  )
}
