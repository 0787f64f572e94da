/**
 * Chunked prefill under lockstep DP attention: how a long prompt's chunks interleave with decode
 * steps, and what that does to everyone's inter-token latency.
 *
 * @since 0.1.0
 */

/**
 * A long prompt split into `extendChunks` chunks on one rank while other ranks decode.
 * `prefillDecodeInterval` (SGLang `--prefill-decode-interval`, N) is the number of decode-only
 * steps forced after each extend step; 0 is prefill-first. Seconds are per step: an extend step
 * costs `max(extendStepSeconds, decodeStepSeconds)` for every rank (lockstep: the chunk holds all
 * ranks), a decode step `decodeStepSeconds`.
 *
 * @category schedule
 * @since 0.1.0
 */
export interface ChunkedPrefillPlan {
  readonly extendChunks: number
  readonly prefillDecodeInterval: number
  readonly extendStepSeconds: number
  readonly decodeStepSeconds: number
}

/**
 * The steps until the long prompt's last chunk is done. `itlSeconds[i]` is the inter-token
 * latency every decoding request (on every rank) sees at step i.
 *
 * @category schedule
 * @since 0.1.0
 */
export interface ChunkedPrefillTimeline {
  readonly kinds: ReadonlyArray<"extend" | "decode">
  readonly itlSeconds: ReadonlyArray<number>
  readonly extendDoneSeconds: number
  readonly medianItlSeconds: number
  readonly extendSteps: number
  readonly decodeSteps: number
}

/**
 * Lay out a chunked prefill on one rank of a lockstep DP group.
 *
 * **When to use**: to see the cost of prefill-first scheduling under DP attention
 * (sgl-project/sglang PR 35017): with N = 0 every step is an extend step and all decoders see the
 * chunk's step time; with N > 0 at most one extend step in any N + 1 consecutive steps.
 *
 * @example
 * ```ts
 * import { chunkedPrefillTimeline } from "@loadledger/step-time"
 * const t = chunkedPrefillTimeline({ extendChunks: 16, prefillDecodeInterval: 2, extendStepSeconds: 0.6, decodeStepSeconds: 0.03 })
 * t.decodeSteps // => 30
 * t.extendDoneSeconds.toFixed(1) // => "10.5"
 * t.medianItlSeconds // => 0.03
 * ```
 *
 * @category schedule
 * @since 0.1.0
 */
export const chunkedPrefillTimeline = (plan: ChunkedPrefillPlan): ChunkedPrefillTimeline => {
  const kinds: Array<"extend" | "decode"> = []
  const itl: Array<number> = []
  const extendSeconds = Math.max(plan.extendStepSeconds, plan.decodeStepSeconds)
  let t = 0
  for (let c = 0; c < plan.extendChunks; c++) {
    if (c > 0)
      for (let d = 0; d < plan.prefillDecodeInterval; d++) {
        kinds.push("decode")
        itl.push(plan.decodeStepSeconds)
        t += plan.decodeStepSeconds
      }
    kinds.push("extend")
    itl.push(extendSeconds)
    t += extendSeconds
  }
  const sorted = [...itl].sort((a, b) => a - b)
  const n = sorted.length
  const median = n === 0 ? 0 : n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2
  return {
    kinds,
    itlSeconds: itl,
    extendDoneSeconds: t,
    medianItlSeconds: median,
    extendSteps: plan.extendChunks,
    decodeSteps: kinds.length - plan.extendChunks
  }
}
