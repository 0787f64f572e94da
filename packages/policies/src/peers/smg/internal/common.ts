/**
 * What the SMG cores share: the healthy-worker filter, the report-wide token usage, throughput
 * and waiting-token sums, the draw check, and the `SmgSelected` constructor.
 *
 * @internal
 */
import { type PolicyError, policyError } from "../../../Policy.js"
import type { SmgLoadReport, SmgSelected, SmgWorker } from "../Types.js"

/** `get_healthy_worker_indices`: healthy and circuit breaker closed, in list order. */
export const healthyIndices = (workers: ReadonlyArray<SmgWorker>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i]!
    if (w.healthy && w.circuitBreakerCanExecute) out.push(i)
  }
  return out
}

/**
 * `effective_token_usage()`: mean `token_usage` over the report's rows (0 when none), summed in
 * order; rows without the field do not count (the adapters never hand a core such a row).
 */
export const effectiveTokenUsage = (r: SmgLoadReport): number => {
  let s = 0
  let n = 0
  for (const l of r.loads)
    if (l.tokenUsage !== undefined) {
      s += l.tokenUsage
      n++
    }
  return n === 0 ? 0 : s / n
}

/**
 * `total_gen_throughput()`: sum of `gen_throughput` in array order, over the rows that report it
 * (none: 0, which upstream's non-positive rule turns into its default throughput).
 */
export const totalGenThroughput = (r: SmgLoadReport): number => {
  let s = 0
  for (const l of r.loads) if (l.genThroughput !== undefined) s += l.genThroughput
  return s
}

/** Sum of `num_waiting_uncached_tokens` over the rows that report it. */
export const totalWaitingUncached = (r: SmgLoadReport): number => {
  let s = 0
  for (const l of r.loads) if (l.numWaitingUncachedTokens !== undefined) s += l.numWaitingUncachedTokens
  return s
}

/** Check that draw `i` exists and is an integer in `[0, n)`. */
export const checkDraw = (draws: ReadonlyArray<number>, i: number, n: number): PolicyError | undefined => {
  const d = draws[i]
  return d !== undefined && Number.isInteger(d) && d >= 0 && d < n
    ? undefined
    : policyError(
        "InvalidInput",
        `draw ${i} must be an integer in [0, ${n}), got ${String(d)}`,
        `draws[${i}]`
      )
}

export const selected = <S>(
  index: number | undefined,
  state: S,
  processed: boolean,
  details: Readonly<Record<string, unknown>>
): SmgSelected<S> => ({ _tag: "SmgSelected", index, state, processed, details })
