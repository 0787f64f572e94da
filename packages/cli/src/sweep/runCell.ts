/**
 * Run one sweep cell: read its trace (cached per thread), scale it, simulate its policy.
 *
 * @since 0.2.0
 */
import { findPolicy } from "@loadledger/policies"
import { type PolicyResult, scaleTrace, simulate, type TraceRequest } from "@loadledger/sim"
import { readTraceFile, simConfigFor } from "../internal/simSetup.js"
import type { Cell } from "./SpecTypes.js"

/**
 * A finished cell as written to `<out>/cells/<id>.json`: the cell, its result, and the wall time it
 * took (the only field that differs between two runs of the same cell).
 *
 * @category sweep
 * @since 0.2.0
 */
export interface CellResult {
  readonly cell: Cell
  readonly result: PolicyResult
  readonly wallSeconds: number
}

const traces = new Map<string, ReadonlyArray<TraceRequest>>()

/**
 * Simulate one cell. Deterministic in everything but `wallSeconds`. Throws a one-line `Error` on a
 * bad trace or an unknown policy (the spec check makes both unlikely).
 *
 * @example
 * ```ts
 * import { runCell } from "./runCell.js"
 * const cell = {
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 4, dp: 2, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * }
 * const done = runCell(cell)
 * done.cell.id // => "demo"
 * done.result.policy // => "total-tokens"
 * done.result.requests.finished // => 4
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const runCell = (cell: Cell): CellResult => {
  const started = performance.now()
  let trace = traces.get(cell.trace)
  if (trace === undefined) {
    trace = readTraceFile(cell.trace)
    traces.set(cell.trace, trace)
  }
  const entry = findPolicy(cell.policy)
  if (entry === undefined) throw new Error(`unknown policy "${cell.policy}"`)
  const config = simConfigFor(cell)
  const result = simulate(config, scaleTrace(trace, { rateScale: cell.rate, limit: cell.limit }), entry)
  return { cell, result, wallSeconds: (performance.now() - started) / 1000 }
}
