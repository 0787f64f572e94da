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

/** `effective_token_usage()`: mean `token_usage` over the report's rows (0 when none), summed in order. */
export const effectiveTokenUsage = (r: SmgLoadReport): number => {
  if (r.loads.length === 0) return 0
  let s = 0
  for (const l of r.loads) s += l.tokenUsage
  return s / r.loads.length
}

/** `total_gen_throughput()`: sum of `gen_throughput` in array order. */
export const totalGenThroughput = (r: SmgLoadReport): number => {
  let s = 0
  for (const l of r.loads) s += l.genThroughput
  return s
}

/** Sum of `num_waiting_uncached_tokens`. */
export const totalWaitingUncached = (r: SmgLoadReport): number => {
  let s = 0
  for (const l of r.loads) s += l.numWaitingUncachedTokens
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
