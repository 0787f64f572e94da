/**
 * `loadledger diagnose FILE [--json]`: which kind of slow is each rank of a lockstep DP group
 * (`hardware`, `load` with its skew, `expert` (it holds hot experts) or `ok`), and is structural
 * slowness (an expert hot spot) likely, from a
 * `/v1/loads` time series (a `hardware` rank may be a slow GPU, a CPU-starved scheduler or a slow
 * link: the published reports do not tell them apart) (`simulate --emit-loads FILE`, or recorded from an engine).
 *
 * @since 0.6.0
 */
import { readFileSync } from "node:fs"
import { stringifyJsonSafe } from "@loadledger/schema"
import type { Command } from "commander"
import { type Diagnosis, diagnose } from "../diagnose/diagnose.js"
import { parseLoadsLines } from "../diagnose/readLoads.js"
import { fail } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { escapeLines } from "../internal/terminalText.js"

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`

/**
 * The diagnosis as text: one line per rank with its evidence, then the group's line.
 *
 * @example
 * ```ts
 * import { diagnosisText } from "./diagnose.js"
 * const evidence = { utilizationRatio: 1.4, residual: 0.4, runningSkew: 0, requestSkew: 0, lengthSkew: 0, cacheHitRateGap: 0 }
 * const group = { structuralLikely: false, expertHotSpotLikely: false, evidence: { syncWaitShare: 0.2, requestImbalance: 1.05, reports: 30, fit: { requests: 0.1, tokens: 0.2, prefill: 0 }, minResidual: 0, expertSpread: 0 } }
 * diagnosisText({ ranks: [{ dpRank: 3, kind: "hardware", evidence }], group }).split("\n")[0]
 * // => "rank 3: hardware (slow GPU, CPU or link: the reports do not tell them apart)  (forward time 140.0% of the group's mean, 40.0% not explained by its load; requests +0.0%, tokens/request +0.0%)"
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const diagnosisText = (d: Diagnosis): string => {
  const sign = (x: number) => `${x >= 0 ? "+" : ""}${pct(x)}`
  const lines = d.ranks.map((r) => {
    const e = r.evidence
    const kind =
      r.kind === "load"
        ? `load (${r.skew})`
        : r.kind === "hardware"
          ? "hardware (slow GPU, CPU or link: the reports do not tell them apart)"
          : r.kind
    const requests =
      e.requestSkew === undefined
        ? `running requests ${sign(e.runningSkew)} (waiting not published)`
        : `requests ${sign(e.requestSkew)}`
    const cache =
      e.cacheHitRateGap === undefined
        ? ", cache hit rate not published"
        : e.cacheHitRateGap > 0.01
          ? `, cache hit rate ${pct(e.cacheHitRateGap)} below the group's`
          : ""
    return `rank ${r.dpRank}: ${kind}  (forward time ${pct(e.utilizationRatio)} of the group's mean, ${pct(e.residual)} not explained by its load; ${requests}, tokens/request ${sign(e.lengthSkew)}${cache})`
  })
  const g = d.group.evidence
  lines.push(
    `group: structural slowness ${d.group.structuralLikely ? "likely" : "not indicated"} (ranks wait ${pct(g.syncWaitShare)} of their busy time, request imbalance ${g.requestImbalance.toFixed(2)}, ${g.reports} reports with every rank busy)`
  )
  if (d.group.expertHotSpotLikely)
    lines.push(
      `group: expert hot spot likely (at equal load the ranks' forward times spread over ${pct(g.expertSpread)} without the slowest, down to ${pct(g.minResidual)} below the typical rank, which one slow GPU does not do; the ranks marked expert hold the hot experts: rebalance them with EPLB / redundant experts)`
    )
  return lines.join("\n")
}

/**
 * Registers `loadledger diagnose FILE [--json]`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./diagnose.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "diagnose"
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export const register = (program: Command): void => {
  program
    .command("diagnose")
    .description(
      "which kind of slow is each rank (hardware, load, expert hot spot, ok) from a /v1/loads time series"
    )
    .argument("<file>", "JSON lines of /v1/loads responses (e.g. from simulate --emit-loads)")
    .option("--json", "print { ranks: [{ dpRank, kind, skew?, evidence }], group } as JSON")
    .addHelpText("after", examplesHelp("diagnose"))
    .action((file: string, opts: { json?: boolean }) => {
      let text: string
      try {
        text = readFileSync(file, "utf8")
      } catch (e) {
        return fail(`cannot read ${file}: ${(e as Error).message}`)
      }
      const reports = parseLoadsLines(text)
      if (!Array.isArray(reports)) return fail(`${file}: ${(reports as { message: string }).message}`)
      const d = diagnose(reports)
      process.stdout.write(opts.json ? `${stringifyJsonSafe(d)}\n` : `${escapeLines(diagnosisText(d))}\n`)
    })
}
