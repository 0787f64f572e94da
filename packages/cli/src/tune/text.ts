/**
 * The report `loadledger tune` prints beside the configuration: the weights chosen, the goodput
 * of the default and the tuned configuration on the half that tuned and on the held-out half, the
 * paired difference there and the balance bound.
 *
 * @since 0.6.0
 */
import type { GoodputEstimate } from "@loadledger/sim"
import { f, pct, signed } from "../goodput/format.js"
import type { TuneOutcome } from "./run.js"

/**
 * What the report says about the run besides the outcome.
 *
 * @category tune
 * @since 0.6.0
 */
export interface TuneContext {
  readonly trace: string
  readonly requests: number
  readonly from: string
  readonly engine: string
  readonly frontEnds: number
  readonly slo: string
  readonly windows: number
  readonly seconds: number
  readonly out?: string | undefined
}

/** A goodput with its interval: `1.23 [1.10, 1.36] req/s`. */
const g = (e: GoodputEstimate): string =>
  `${f(e.requestsPerSecond, 3)} [${f(e.ci[0], 3)}, ${f(e.ci[1], 3)}] req/s`

/**
 * The report's lines (ending in a newline).
 *
 * @example
 * ```ts
 * import { tuneReport } from "./text.js"
 * const e = (x: number) => ({ _tag: "GoodputEstimate" as const, requestsPerSecond: x, ci: [x - 0.1, x + 0.1] as const, rate: x, rateCi: [x, x] as const, confidence: 0.95, windows: [x, x], unattainable: 0 })
 * const text = tuneReport(
 *   {
 *     config: { kind: "scored", name: "t", terms: [{ term: "tokens", weight: 2 }] }, terms: ["tokens"], evaluations: 5,
 *     tuning: { default: e(1), tuned: e(1.2) },
 *     heldOut: { default: e(1), tuned: e(1.1), bound: e(2), tunedVsDefault: { _tag: "GoodputComparison", ratio: 1.1, ci: [1.02, 1.2], confidence: 0.95, verdict: "better", excludedWindows: 0 } }
 *   },
 *   { trace: "t.jsonl", requests: 400, from: "ledger-scored", engine: "sglang", frontEnds: 1, slo: "TTFT <= 10 s", windows: 2, seconds: 3 }
 * )
 * text.split("\n")[4] // => "held-out half: default 1.000 [0.900, 1.100] req/s (50.0% of the bound), tuned 1.100 [1.000, 1.200] req/s (55.0%); tuned vs default +10.0% [+2.0%, +20.0%] (better); balance bound 2.000 [1.900, 2.100] req/s"
 * ```
 *
 * @category tune
 * @since 0.6.0
 */
export const tuneReport = (t: TuneOutcome, c: TuneContext): string => {
  const vs = t.heldOut.tunedVsDefault
  const bound = t.heldOut.bound.requestsPerSecond
  const share = (e: GoodputEstimate) => pct(bound > 0 ? e.requestsPerSecond / bound : Number.NaN)
  const weights = (t.config.terms ?? [])
    .filter((x) => t.terms.includes(x.term))
    .map((x) => `${x.term} ${x.weight}`)
    .join(", ")
  const lines = [
    `tuned ${c.from} on ${c.trace} (${c.requests} requests), ${c.engine} engine${c.frontEnds > 1 ? `, ${c.frontEnds} front ends` : ""}; SLO: ${c.slo}`,
    `weights searched: ${t.terms.join(", ")}; ${t.evaluations} evaluations on the first half (${c.windows} windows); chosen: ${weights}`,
    `first half (tuned on): default ${g(t.tuning.default)}, tuned ${g(t.tuning.tuned)} (${signed(t.tuning.tuned.requestsPerSecond / t.tuning.default.requestsPerSecond)})`,
    `held-out half (${c.windows} windows it did not see), goodput under the SLO:`,
    `held-out half: default ${g(t.heldOut.default)} (${share(t.heldOut.default)} of the bound), tuned ${g(t.heldOut.tuned)} (${share(t.heldOut.tuned)}); tuned vs default ${
      vs.verdict === "not comparable"
        ? `not comparable: ${vs.reason ?? ""}`
        : `${signed(vs.ratio)} [${signed(vs.ci[0])}, ${signed(vs.ci[1])}] (${vs.verdict})`
    }; balance bound ${g(t.heldOut.bound)}`,
    `${c.seconds.toFixed(1)} s${c.out === undefined ? "" : `; configuration written to ${c.out}`} (run it: --policy-config FILE on simulate, goodput, serve)`
  ]
  return `${lines.join("\n")}\n`
}
