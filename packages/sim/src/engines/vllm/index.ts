/**
 * The vLLM engine model. A rank batches its decodes first, then prefill chunks, under one token
 * budget (`max_num_batched_tokens`), and preempts the last request of its running queue when KV
 * runs out, vllm `v1/core/sched/scheduler.py` `Scheduler.schedule` @00080ee1. Its ranks report to
 * the DP coordinator, which publishes to every front end on its own cadence, and its lockstep
 * groups run in waves (`run.ts`, `loads.ts`); its own options are in `options.ts`.
 */
import { addDecodes, addPrefills } from "../../internal/rankBatch.js"
import type { EngineModel } from "../Engine.js"
import { VllmRun } from "./internal/run.js"
import { vllmOptions } from "./options.js"

/**
 * The vLLM engine: mixed batches under one budget, the DP coordinator, waves, several front ends.
 *
 * @example
 * ```ts
 * import { vllmEngine } from "./index.js"
 * vllmEngine.name // => "vllm"
 * vllmEngine.options.length // => 6
 * ```
 *
 * @category engines
 * @since 0.6.0
 */
export const vllmEngine: EngineModel<"vllm"> = {
  name: "vllm",
  label: "vLLM",
  options: vllmOptions,
  rank: {
    fill: (rank, budget, now) => {
      const n = addDecodes(rank)
      addPrefills(rank, budget - n, now)
    },
    retractVictim: (tail) => tail
  },
  start: (setup) => new VllmRun(setup)
}
