/**
 * The objective of `loadledger tune`: a configured policy's goodput on some windows of the trace,
 * by the same goodput search as `loadledger goodput` (`runGoodputJob`, in this thread), each
 * window's search started from a reference rate (the starting configuration's answer there).
 *
 * @since 0.6.0
 */
import { type EngineName, meanArrivalRate } from "@loadledger/sim"
import {
  type GoodputJob,
  type GoodputSetup,
  runGoodputJob,
  type Subject,
  windowsOf
} from "../goodput/jobs.js"

/**
 * What one evaluation runs on: the setup (its trace cut into `setup.windows` windows), the engine,
 * and which windows (indices).
 *
 * @category tune
 * @since 0.6.0
 */
export interface TuneGround {
  readonly setup: GoodputSetup
  readonly engine: EngineName
  readonly windows: ReadonlyArray<number>
}

/**
 * The goodput (requests per second) of `subject` on each of `ground.windows`, found as `goodput`
 * finds it; with `warm` (one reference goodput per window, requests per second), each search
 * starts at that rate and brackets in 5% steps (as `goodput`'s warm start), searched again from
the setup's start when that finds no bracket (a goodput far from the reference). Throws an `Error`
 * naming the window when a search failed.
 *
 * @example
 * ```ts
 * import { windowGoodputs } from "./evaluate.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * if (slo._tag === "SloError") throw new Error(slo.message)
 * const setup = {
 *   trace: "examples/traces/mooncake/conversation_trace.jsonl", limit: 100, windows: 2, model: "glm-5.3", gpu: "h200",
 *   dp: 2, frontEnds: 1, seed: 0, slo: slo.slo, start: 1, precision: 0.1
 * }
 * const g = windowGoodputs({ setup, engine: "sglang", windows: [0, 1] }, { kind: "policy", name: "round-robin" })
 * // window 0 opens on a burst of long prompts no placement serves within 10 s: unattainable there
 * g[0] // => 0
 * g[1]! > 0 // => true
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const windowGoodputs = (
  ground: TuneGround,
  subject: Subject,
  warm?: ReadonlyArray<number> | undefined
): Array<number> =>
  ground.windows.map((window, i) => {
    const ref = warm?.[i]
    const base = meanArrivalRate(windowsOf(ground.setup)[window] ?? [])
    const job: GoodputJob = {
      setup: ground.setup,
      engine: ground.engine,
      subject,
      window,
      mode:
        ref !== undefined && ref > 0 && base !== undefined
          ? { kind: "search", start: ref / base, step: 1.05 }
          : { kind: "search" }
    }
    const warmed = runGoodputJob(job)
    // a warm bracket (5% steps) fails far from the reference: search again from the setup's start
    const r =
      warmed.kind === "error" && job.mode.kind === "search" && job.mode.start !== undefined
        ? runGoodputJob({ ...job, mode: { kind: "search" } })
        : warmed
    if (r.kind !== "search")
      throw new Error(`window ${window}: ${r.kind === "error" ? r.message : "not a search"}`)
    return r.requestsPerSecond
  })
