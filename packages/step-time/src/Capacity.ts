/**
 * Running-batch capacity of DP-attention ranks.
 *
 * @since 0.1.0
 */

/**
 * Per-rank and fleet running-request capacity: SGLang splits `--max-running-requests` evenly
 * over the DP-attention ranks, so each rank may run `floor(maxRunningRequests / dpSize)`
 * requests, every one of them usable (sgl-project/sglang issues 38118 and 30294: a reserved slot
 * made ranks plateau one below this cap).
 *
 * @example
 * ```ts
 * import { runningCapacity } from "@loadledger/step-time"
 * runningCapacity({ maxRunningRequests: 128, dpSize: 8 }) // => { perRank: 16, fleet: 128 }
 * ```
 *
 * @category capacity
 * @since 0.1.0
 */
export const runningCapacity = (input: {
  readonly maxRunningRequests: number
  readonly dpSize: number
}): { readonly perRank: number; readonly fleet: number } => {
  const perRank = Math.floor(input.maxRunningRequests / input.dpSize)
  return { perRank, fleet: perRank * input.dpSize }
}

/**
 * How many waiting requests a rank admits this step: up to its cap, never more than are
 * waiting, never negative.
 *
 * @example
 * ```ts
 * import { admitCount } from "@loadledger/step-time"
 * admitCount({ running: 15, waiting: 3, perRankCap: 16 }) // => 1
 * ```
 *
 * @category capacity
 * @since 0.1.0
 */
export const admitCount = (input: {
  readonly running: number
  readonly waiting: number
  readonly perRankCap: number
}): number => Math.max(0, Math.min(input.waiting, input.perRankCap - input.running))
