/**
 * TensorRT-LLM's ADP balance decision (`balance_adp_requests`, NVIDIA/TensorRT-LLM
 * `tensorrt_llm/_torch/pyexecutor/scheduler/unified_scheduler.py` `_balance_adp_requests`, the
 * same rule as `py_executor.py`'s): from the allgathered counts of each rank's schedulable context
 * and generation requests, every rank either schedules its context requests this iteration or holds
 * them (generation only). Implemented from the behaviour, not copied.
 *
 * - every rank has a context request and a free batch slot: the context wait resets; if every rank
 *   also has a generation request, the contexts wait `batchingWaitIters` iterations (counted, then
 *   reset) so more accumulate, else they run;
 * - otherwise the contexts wait, at most `timeoutIters` iterations, and run at once when some rank
 *   has no generation request (nothing to overlap with).
 */

/** The two counters every rank keeps alike (the decision is global). */
export interface BalanceCounters {
  ctxWaitingIters: number
  ctxBatchingIters: number
}

/** One rank's allgathered counts. */
export interface BalanceRank {
  readonly numContext: number
  readonly numGeneration: number
}

/**
 * Whether the ranks hold their context requests this iteration; updates `c`.
 *
 * @example
 * ```ts
 * import { holdContexts } from "./balance.js"
 * const c = { ctxWaitingIters: 0, ctxBatchingIters: 0 }
 * // rank 1 has no context request yet: wait (1 of 2 iterations)
 * holdContexts(c, [{ numContext: 1, numGeneration: 3 }, { numContext: 0, numGeneration: 4 }], 512, 2, 0) // => true
 * holdContexts(c, [{ numContext: 1, numGeneration: 3 }, { numContext: 0, numGeneration: 4 }], 512, 2, 0) // => false
 * ```
 *
 * @category engines
 * @since 0.7.0
 */
export const holdContexts = (
  c: BalanceCounters,
  ranks: ReadonlyArray<BalanceRank>,
  maxBatchSize: number,
  timeoutIters: number,
  batchingWaitIters: number
): boolean => {
  let allCtx = true
  let allGen = true
  let allFree = true
  for (const r of ranks) {
    if (r.numContext === 0) allCtx = false
    if (r.numGeneration === 0) allGen = false
    if (r.numGeneration >= maxBatchSize) allFree = false
  }
  if (allFree && allCtx) {
    c.ctxWaitingIters = 0
    if (!allGen) return false
    if (c.ctxBatchingIters < batchingWaitIters) {
      c.ctxBatchingIters++
      return true
    }
    c.ctxBatchingIters = 0
    return false
  }
  c.ctxWaitingIters++
  if (c.ctxWaitingIters >= timeoutIters || !allGen) {
    c.ctxWaitingIters = 0
    return false
  }
  return true
}
