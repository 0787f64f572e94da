/**
 * What `simulate` prints and writes once its runs are done: the table (or JSON) on stdout, each
 * stopped run's message on stderr, the HTML report and the emitted load reports.
 *
 * @since 0.6.0
 */

import { writeFileSync } from "node:fs"
import type { EngineName } from "@loadledger/sim"
import {
  describeTokenIds,
  loadReportsOf,
  type PolicyResult,
  type TraceRequest,
  traceTokenIds
} from "@loadledger/sim"
import { escapeLines } from "../internal/terminalText.js"
import { renderReport } from "./simulateReport.js"
import { outcomeLabel, renderTable, runOutcome } from "./simulateTable.js"

/**
 * The options of `simulate` its output reads (a subset of `SimulateOptions`).
 *
 * @category simulate
 * @since 0.6.0
 */
export interface SimulateOutputOptions {
  readonly trace: string
  readonly rateScale?: number | undefined
  readonly model: string
  readonly gpu: string
  readonly dp: number
  readonly seed: number
  readonly json?: boolean | undefined
  readonly report?: string | undefined
  /** `--emit-loads FILE`: the SGLang `/v1/loads` reports each run's ranks would have published. */
  readonly emitLoads?: string | undefined
}

/**
 * Print `simulate`'s results (the table, or JSON with each row's `keptUp` / `outcome`), the message
 * of every run that stopped, and write `--report`; `trace` is the replayed trace (an array, or the
 * stream `simulate` replayed), `requests` its size, `kvPoolTokens` the pool each rank had; with
 * `emitLoads`, one `/v1/loads` response per simulated second per run (`loadReportsOf`).
 *
 * @example
 * ```ts
 * import { printSimulateResults } from "./simulateOutput.js"
 * typeof printSimulateResults // => "function"
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const printSimulateResults = async (
  o: SimulateOutputOptions,
  rows: ReadonlyArray<{ engine: EngineName; result: PolicyResult }>,
  trace: ReadonlyArray<TraceRequest> | Iterable<TraceRequest>,
  requests: number,
  kvPoolTokens: number | undefined
): Promise<void> => {
  const table = renderTable(rows, process.stdout.isTTY === true)
  const header = `${requests} requests from ${escapeLines(o.trace)}${o.rateScale && o.rateScale !== 1 ? ` at ${o.rateScale}x rate` : ""}; ${o.model} on ${o.gpu}, DP ${o.dp}`
  // whether the policies routed on the trace's token ids or on ids synthesised for it
  const tokenIds =
    (Array.isArray(trace) ? undefined : rows[0]?.result.tokenIds) ??
    traceTokenIds(Array.isArray(trace) ? (trace as ReadonlyArray<TraceRequest>) : [...trace])
  if (o.json) {
    const out = {
      trace: o.trace,
      requests,
      model: o.model,
      gpu: o.gpu,
      dp: o.dp,
      seed: o.seed,
      kvPoolTokens: kvPoolTokens,
      tokenIds,
      // `keptUp` and `outcome`: the table's status cell (runOutcome / outcomeLabel), e.g. "behind 5000/5000"
      results: rows.map(({ engine, result }) => {
        const outcome = runOutcome(result)
        return { engine, ...result, keptUp: outcome.keptUp, outcome: outcomeLabel(outcome) }
      })
    }
    process.stdout.write(`${JSON.stringify(out)}\n`)
  } else process.stdout.write(`${header}\n${describeTokenIds(tokenIds)}\n${table}\n`)
  for (const { result } of rows)
    if (result.status._tag !== "Completed" && result.status._tag !== "TimeLimit")
      process.stderr.write(
        `loadledger: ${result.policy}: ${escapeLines(result.status.message.replace(/\n/g, " "))}\n`
      )
  if (o.report !== undefined) {
    const html = await renderReport({
      title: `loadledger simulate: ${header}`,
      runs: rows.map(({ engine, result }) => ({ engine, result })),
      tableText: renderTable(rows, false)
    })
    writeFileSync(o.report, html)
    if (!o.json) process.stdout.write(`report written to ${o.report}\n`)
  }
  if (o.emitLoads !== undefined) {
    // loaded only for --emit-loads: the encoder pulls in effect's Schema, which a replay needs not
    const { v1LoadsLines } = await import("../diagnose/emitLoads.js")
    writeFileSync(
      o.emitLoads,
      rows.map(({ result: r }) => v1LoadsLines(loadReportsOf(r.stepLog ?? [], o.dp, 1), r.policy)).join("")
    )
  }
}
