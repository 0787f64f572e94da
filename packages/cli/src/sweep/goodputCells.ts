/**
 * Goodput cells of a sweep (a spec with `goodput:`): one cell finds one subject's goodput on every
 * window of its trace, as `loadledger goodput` does; the summary ranks each (trace, DP, front end)
 * block with intervals, shares of the balance bound and paired verdicts against the block's best.
 *
 * @since 0.5.0
 */
import { estimateGoodput, type GoodputProbe } from "@loadledger/sim"
import { type EngineBoard, type RankInput, rankBoard } from "../goodput/board.js"
import { verdictText } from "../goodput/format.js"
import {
  type GoodputJobResult,
  runGoodputJob,
  type Subject,
  traceRateOf,
  windowsOf
} from "../goodput/jobs.js"
import { engineJson } from "../goodput/table.js"
import { frontEndLabel } from "./Cells.js"
import type { Cell, GoodputCells } from "./SpecTypes.js"

/**
 * A finished goodput cell as written to `<out>/cells/<id>.json`: the cell, its goodput on each
 * window (requests per second, 0 where the SLO is unattainable), each window's probes, the most
 * requests any probe rejected, the trace's own mean arrival rate, and the wall time.
 *
 * @category sweep
 * @since 0.5.0
 */
export interface GoodputCellResult {
  readonly cell: Cell
  readonly goodput: {
    readonly windows: ReadonlyArray<number>
    readonly probes: ReadonlyArray<ReadonlyArray<GoodputProbe>>
    readonly rejected: number
    readonly traceRequestsPerSecond: number
  }
  readonly wallSeconds: number
}

const subjectOf = (policy: string): Subject =>
  policy === "clairvoyant"
    ? { kind: "clairvoyant" }
    : policy === "balance-bound"
      ? { kind: "bound" }
      : { kind: "policy", name: policy }

/**
 * Run one goodput cell (the cell must carry `goodput`): a search on each window, in this thread.
 * Throws a one-line `Error` naming the window when a search could not run.
 *
 * @example
 * ```ts
 * import { runGoodputCell } from "./goodputCells.js"
 * import { parseSlo } from "@loadledger/sim"
 * const slo = parseSlo("ttft=10s,tpot=100ms,attain=0.9")
 * const cell = {
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 80, dp: 2, engine: "sglang" as const, frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0,
 *   goodput: { slo: slo._tag === "Slo" ? slo.slo : undefined!, sloText: "", windows: 2, confidence: 0.95, precision: 0.1 }
 * }
 * runGoodputCell(cell).goodput.windows.length // => 2
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const runGoodputCell = (cell: Cell): GoodputCellResult => {
  const g = cell.goodput
  if (g === undefined) throw new Error(`${cell.id}: not a goodput cell`)
  const started = performance.now()
  const setup = {
    trace: cell.trace,
    limit: cell.limit,
    windows: g.windows,
    model: cell.model,
    gpu: cell.gpu,
    dp: cell.dp,
    frontEnds: cell.frontEnds,
    coordinatorRows: cell.coordinatorRows,
    seed: cell.seed,
    slo: g.slo,
    start: cell.rate,
    precision: g.precision
  }
  const traceRequestsPerSecond = traceRateOf(setup)
  if (traceRequestsPerSecond === undefined)
    throw new Error(`${cell.trace}: the trace's arrivals span no time: it has no rate`)
  const found = windowsOf(setup).map((_, window) => {
    const r = runGoodputJob({
      setup,
      engine: cell.engine,
      subject: subjectOf(cell.policy),
      window,
      mode: { kind: "search" }
    })
    if (r.kind === "error") throw new Error(`${cell.id}, window ${window}: ${r.message}`)
    return r as Extract<GoodputJobResult, { kind: "search" }>
  })
  return {
    cell,
    goodput: {
      windows: found.map((r) => r.requestsPerSecond),
      probes: found.map((r) => r.probes),
      rejected: Math.max(...found.map((r) => r.rejected)),
      traceRequestsPerSecond
    },
    wallSeconds: (performance.now() - started) / 1000
  }
}

/**
 * One block of a goodput sweep: its trace, DP size and front end, and its ranked board.
 *
 * @category sweep
 * @since 0.5.0
 */
export interface GoodputBlock {
  readonly trace: string
  readonly dp: number
  readonly frontEnd: string
  readonly board: EngineBoard
}

/**
 * Rank the finished goodput cells of each (trace, DP, front end) block (see the module note). A block
 * with no finished registered policy is left out; a missing reference or bound leaves its rows out
 * (and the shares of the bound NaN).
 *
 * @example
 * ```ts
 * import { type GoodputCellResult, goodputBlocks } from "./goodputCells.js"
 * const result = (policy: string, windows: Array<number>): GoodputCellResult => ({
 *   cell: { id: policy, trace: "/t/a.jsonl", traceName: "a", rate: 1, dp: 8, engine: "sglang", frontEnds: 1, policy, model: "glm-5.3", gpu: "h200", seed: 0 },
 *   goodput: { windows, probes: [], rejected: 0, traceRequestsPerSecond: 2 },
 *   wallSeconds: 1
 * })
 * const spec = {
 *   slo: { ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" as const },
 *   sloText: "ttft=2s,tpot=100ms", windows: 3, confidence: 0.95, precision: 0.01
 * }
 * const results = [result("a", [4, 5, 6]), result("b", [3, 4, 5]), result("balance-bound", [8, 10, 12])]
 * const [block] = goodputBlocks(results, spec)
 * block?.board.best // => "a"
 * block?.board.rows.map((r) => r.shareOfBound) // => [0.5, 0.4, 1]
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const goodputBlocks = (
  results: ReadonlyArray<GoodputCellResult>,
  spec: GoodputCells
): ReadonlyArray<GoodputBlock> => {
  const blocks = new Map<string, Array<GoodputCellResult>>()
  for (const r of results) {
    const k = `${r.cell.traceName}\u0000${r.cell.dp}\u0000${frontEndLabel(r.cell)}`
    blocks.set(k, [...(blocks.get(k) ?? []), r])
  }
  return [...blocks.values()].flatMap((rs) => {
    const subjects = rs.flatMap((r): Array<RankInput> => {
      const est = estimateGoodput(r.goodput.windows, r.goodput.traceRequestsPerSecond, spec.confidence)
      if (est._tag === "GoodputError") return []
      return [
        {
          policy: r.cell.policy,
          kind: subjectOf(r.cell.policy).kind,
          windows: r.goodput.windows,
          goodput: est,
          probes: r.goodput.probes,
          rejected: r.goodput.rejected,
          curve: []
        }
      ]
    })
    if (!subjects.some((s) => s.kind === "policy")) return []
    const c = rs[0]!.cell
    return [
      {
        trace: c.traceName,
        dp: c.dp,
        frontEnd: frontEndLabel(c),
        board: rankBoard(c.engine, subjects, spec.confidence)
      }
    ]
  })
}

const f = (x: number, d = 4) => (Number.isFinite(x) ? Number(x.toPrecision(d)).toString() : "-")
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "-")

/**
 * A Markdown table per block: rank, policy, goodput (requests per second) with its interval, the rate
 * multiplier, share of the bound, verdict against the best; the SLO and method on top.
 *
 * @example
 * ```ts
 * import { type GoodputCellResult, goodputBlocks, goodputMarkdown } from "./goodputCells.js"
 * const result = (policy: string, windows: Array<number>): GoodputCellResult => ({
 *   cell: { id: policy, trace: "/t/a.jsonl", traceName: "a", rate: 1, dp: 8, engine: "sglang", frontEnds: 1, policy, model: "glm-5.3", gpu: "h200", seed: 0 },
 *   goodput: { windows, probes: [], rejected: 0, traceRequestsPerSecond: 2 },
 *   wallSeconds: 1
 * })
 * const spec = {
 *   slo: { ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" as const },
 *   sloText: "ttft=2s,tpot=100ms", windows: 3, confidence: 0.95, precision: 0.01
 * }
 * const results = [result("a", [4, 5, 6]), result("b", [3, 4, 5]), result("balance-bound", [8, 10, 12])]
 * const lines = goodputMarkdown(goodputBlocks(results, spec), spec).split("\n")
 * lines[2] // => "**a, DP 8, sglang x1**"
 * lines[6]?.startsWith("| 1 | a | 5 [") // => true
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const goodputMarkdown = (blocks: ReadonlyArray<GoodputBlock>, spec: GoodputCells): string => {
  const out = [
    `Goodput under ${spec.sloText} (target attainment ${spec.slo.attainment}, ${spec.slo.criterion}); ${spec.windows} disjoint windows per trace, ${Math.round(spec.confidence * 100)}% Student t intervals, paired verdicts against each block's best.`,
    ""
  ]
  for (const b of blocks) {
    out.push(`**${b.trace}, DP ${b.dp}, ${b.frontEnd}**`, "")
    out.push(
      `| # | policy | goodput req/s [${Math.round(spec.confidence * 100)}% CI] | x trace rate | share of bound | vs best (paired) |`
    )
    out.push("|---|---|---|---|---|---|")
    let rank = 0
    for (const r of b.board.rows) {
      const g = r.goodput
      const name =
        r.kind === "policy" ? r.policy : `${r.policy} (${r.kind === "bound" ? "ceiling" : "reference"})`
      const vs = r.kind === "bound" ? "-" : r.policy === b.board.best ? "best" : verdictText(r.vsBest)
      out.push(
        `| ${r.kind === "policy" ? ++rank : ""} | ${name} | ${f(g.requestsPerSecond)} [${f(g.ci[0])}, ${f(g.ci[1])}] | ${f(g.rate, 3)} | ${r.kind === "bound" ? "100%" : pct(r.shareOfBound)} | ${vs} |`
      )
    }
    out.push("")
  }
  return out.join("\n")
}

/**
 * The blocks as JSON, in `loadledger goodput --json`'s row shape (per block: trace, DP, front end,
 * the ranked `policies` and every pairwise `verdicts`).
 *
 * @example
 * ```ts
 * import { type GoodputCellResult, goodputBlocks, goodputJson } from "./goodputCells.js"
 * const result = (policy: string, windows: Array<number>): GoodputCellResult => ({
 *   cell: { id: policy, trace: "/t/a.jsonl", traceName: "a", rate: 1, dp: 8, engine: "sglang", frontEnds: 1, policy, model: "glm-5.3", gpu: "h200", seed: 0 },
 *   goodput: { windows, probes: [], rejected: 0, traceRequestsPerSecond: 2 },
 *   wallSeconds: 1
 * })
 * const spec = {
 *   slo: { ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" as const },
 *   sloText: "ttft=2s,tpot=100ms", windows: 3, confidence: 0.95, precision: 0.01
 * }
 * const results = [result("a", [4, 5, 6]), result("b", [3, 4, 5]), result("balance-bound", [8, 10, 12])]
 * const [block] = goodputJson(goodputBlocks(results, spec))
 * ;[block?.trace, block?.dp, block?.frontEnd, block?.best] // => ["a", 8, "sglang x1", "a"]
 * ```
 *
 * @category sweep
 * @since 0.5.0
 */
export const goodputJson = (blocks: ReadonlyArray<GoodputBlock>) =>
  blocks.map((b) => ({ trace: b.trace, dp: b.dp, frontEnd: b.frontEnd, ...engineJson(b.board) }))
