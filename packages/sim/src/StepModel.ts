/**
 * The step-time interface the simulator charges each lockstep step with.
 *
 * @since 0.1.0
 */

/**
 * One rank's batch in a step, summarised. `attentionPairs`: a decode with context L adds L; an
 * extend of e tokens after a prefix p adds p*e + e*(e+1)/2. `tokens` = decode tokens + extend
 * tokens (0 for a rank running an idle/dummy batch). `kvReadPairs` is set when a sparse-attention
 * top-k caps the keys each query reads, and then `denseKvReadPairs` (the uncapped keys read
 * once per 128-query tile: the index keys DSA's lightning indexer reads); `numExtends` counts
 * prefill chunks.
 *
 * @category models
 * @since 0.1.0
 */
export interface RankWork {
  readonly attentionPairs: number
  readonly tokens: number
  readonly numDecodes: number
  readonly extendTokens: number
  readonly numRequests: number
  readonly numExtends: number
  readonly kvReadPairs?: number | undefined
  readonly denseKvReadPairs?: number | undefined
}

/**
 * What a step costs: its duration (seconds, > 0), the token imbalance ratio (max over mean of the
 * ranks' tokens; 1.0 balanced, the number of ranks when one rank has all the work), and each rank's
 * sync wait in seconds (time spent waiting for the slowest rank in the collectives).
 *
 * `syncWaitSeconds` (optional) holds the same waits as a plain array (`syncWaitSeconds[i] ===
 * ranks[i].syncWaitSeconds`): when a model sets it the simulator reads it and never touches
 * `ranks`, so a model can build `ranks` only on demand (as `stepModelFor` does).
 *
 * `commSeconds` (optional, since 0.7.0): the step's collectives (gather / reduce-scatter, or the
 * expert all-to-all), over all layers; a slow link (`RankFault.linkSpeed`) lengthens this part.
 * A model that leaves it out gives a slow link nothing to slow (`stepModelFor` sets it).
 *
 * @category models
 * @since 0.1.0
 */
export interface StepCost {
  readonly stepSeconds: number
  readonly tokenImbalanceRatio: number
  readonly ranks: ReadonlyArray<{ readonly syncWaitSeconds: number }>
  readonly syncWaitSeconds?: ReadonlyArray<number> | undefined
  readonly commSeconds?: number | undefined
}

/**
 * A step-time model: the cost of one step of a group of ranks, from their batches. The CLI and the
 * demo use `@loadledger/step-time` (see `stepModelFor`); tests may pass a simple one.
 *
 * @example
 * ```ts
 * import type { StepModel } from "@loadledger/sim"
 * const fixed: StepModel = (ranks) => ({
 *   stepSeconds: 0.03,
 *   tokenImbalanceRatio: 1,
 *   ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
 * })
 * fixed([]).stepSeconds // => 0.03
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type StepModel = (ranks: ReadonlyArray<RankWork>) => StepCost
