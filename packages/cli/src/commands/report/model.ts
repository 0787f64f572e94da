/**
 * What a report is built from, and the pure data shaping its charts need (downsampling, trimming).
 *
 * @since 0.2.0
 */
import type { PolicyResult } from "@loadledger/sim"

/**
 * One simulation run shown in a report: the result, the engine it ran on, and an optional `label`
 * (defaults to the policy name; a sweep sets e.g. `total-tokens @ 2x`).
 *
 * @category report
 * @since 0.2.0
 */
export interface ReportRun {
  readonly engine: string
  readonly result: PolicyResult
  readonly label?: string | undefined
}

/**
 * A sweep's grid view: `metric` per policy (rows) across `x` values (columns, e.g. rates), the best
 * cell of each column marked (`better` says which way). A missing `value` is an empty cell (a cell
 * that failed or did not run), never drawn as 0.
 *
 * @category report
 * @since 0.2.0
 */
export interface ReportGrid {
  readonly title: string
  readonly metric: string
  readonly xName: string
  readonly better: "lower" | "higher"
  readonly cells: ReadonlyArray<{
    readonly policy: string
    readonly x: string | number
    readonly value?: number | undefined
  }>
}

/**
 * Everything `renderReport` needs: a title, the runs, optional grid views (a sweep), optional
 * lines of context (trace, model, GPU) and the terminal table text.
 *
 * @category report
 * @since 0.2.0
 */
export interface ReportInput {
  readonly title: string
  readonly runs: ReadonlyArray<ReportRun>
  readonly grids?: ReadonlyArray<ReportGrid> | undefined
  readonly context?: ReadonlyArray<string> | undefined
  readonly tableText?: string | undefined
}

/**
 * One chart of the page: an ECharts option (plain JSON: no functions), its heading, a short "how
 * to read this", and its height in pixels.
 *
 * @category report
 * @since 0.2.0
 */
export interface ChartSpec {
  readonly id: string
  readonly title: string
  readonly how: string
  /** A caution shown under "how to read this" where the measure is known to mislead (e.g. light load). */
  readonly note?: string | undefined
  readonly height: number
  readonly option: Record<string, unknown>
  /** A second view the reader can switch to with a button (`label`; `back` switches back). */
  readonly alt?:
    | { readonly label: string; readonly back: string; readonly option: Record<string, unknown> }
    | undefined
}

/**
 * The label a run is shown under: its `label`, else its policy's name.
 *
 * @example
 * ```ts
 * import { runLabel } from "./model.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * runLabel({ engine: "sglang", result }) // => "total-tokens"
 * runLabel({ engine: "sglang", result, label: "total-tokens @ 2x" }) // => "total-tokens @ 2x"
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const runLabel = (r: ReportRun): string => r.label ?? r.result.policy

/**
 * Shrink a sampled time series to at most `maxPoints` columns, keeping each bin's maximum per rank
 * (a short spike stays visible) and the bin's first time.
 *
 * @example
 * ```ts
 * import { downsampleMax } from "./model.js"
 * downsampleMax([0, 1, 2, 3], [[1, 5, 2, 0], [0, 0, 3, 1]], 2)
 * // => { seconds: [0, 2], perRank: [[5, 2], [0, 3]] }
 * downsampleMax([0, 1], [[1, 2]], 10) // => { seconds: [0, 1], perRank: [[1, 2]] }
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const downsampleMax = (
  seconds: ReadonlyArray<number>,
  perRank: ReadonlyArray<ReadonlyArray<number>>,
  maxPoints: number
): { seconds: Array<number>; perRank: Array<Array<number>> } => {
  const n = seconds.length
  if (n <= maxPoints) return { seconds: [...seconds], perRank: perRank.map((ys) => [...ys]) }
  const bins = Math.max(1, Math.floor(maxPoints))
  const start = (b: number) => Math.floor((b * n) / bins)
  const outSeconds = Array.from({ length: bins }, (_, b) => seconds[start(b)]!)
  const outRanks = perRank.map((ys) =>
    Array.from({ length: bins }, (_, b) => {
      let m = Number.NEGATIVE_INFINITY
      for (let i = start(b); i < start(b + 1); i++) m = Math.max(m, ys[i] ?? Number.NEGATIVE_INFINITY)
      return m
    })
  )
  return { seconds: outSeconds, perRank: outRanks }
}

/**
 * The index range `[first, last]` of buckets that hold a count in any of the histograms, so empty
 * buckets at either end are not drawn; `undefined` when every count is 0.
 *
 * @example
 * ```ts
 * import { nonEmptyRange } from "./model.js"
 * nonEmptyRange([[0, 3, 0, 1, 0, 0], [0, 0, 2, 0, 0, 0]]) // => [1, 3]
 * nonEmptyRange([[0, 0]]) // => undefined
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const nonEmptyRange = (
  counts: ReadonlyArray<ReadonlyArray<number>>
): readonly [number, number] | undefined => {
  let first = Number.POSITIVE_INFINITY
  let last = -1
  for (const cs of counts)
    cs.forEach((c, i) => {
      if (c > 0) {
        first = Math.min(first, i)
        last = Math.max(last, i)
      }
    })
  return last < 0 ? undefined : [first, last]
}

/**
 * Points `[value, share]` of an empirical CDF for a log x axis: drops non-positive values (a log
 * axis cannot place them) and repeats of the same value, keeping the highest share at each value.
 *
 * @example
 * ```ts
 * import { cdfPoints } from "./model.js"
 * cdfPoints([0, 0.25, 0.5, 0.75, 1], [0, 0.1, 0.1, 0.2, 0.4]) // => [[0.1, 0.5], [0.2, 0.75], [0.4, 1]]
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const cdfPoints = (
  quantiles: ReadonlyArray<number>,
  values: ReadonlyArray<number>
): Array<[number, number]> => {
  const out: Array<[number, number]> = []
  values.forEach((v, i) => {
    if (!(v > 0)) return
    const last = out[out.length - 1]
    if (last !== undefined && last[0] === v) last[1] = quantiles[i]!
    else out.push([v, quantiles[i]!])
  })
  return out
}

/**
 * Round to 4 significant digits (keeps the page small; a chart cannot show more); 0 and
 * non-finite values pass through.
 *
 * @example
 * ```ts
 * import { sig } from "./model.js"
 * sig(3.14159265) // => 3.142
 * sig(123456) // => 123500
 * sig(0) // => 0
 * sig(Number.POSITIVE_INFINITY) // => Number.POSITIVE_INFINITY
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const sig = (x: number): number => (x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(4)))

/**
 * The series palette of every chart: Okabe & Ito's colour-blind-safe set (Okabe, Ito 2008, "Color
 * Universal Design"), blue and orange first, yellow (weak on white) last.
 *
 * @example
 * ```ts
 * import { PALETTE } from "./model.js"
 * PALETTE.length // => 8
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const PALETTE: ReadonlyArray<string> = [
  "#0072B2",
  "#E69F00",
  "#009E73",
  "#CC79A7",
  "#D55E00",
  "#56B4E9",
  "#000000",
  "#F0E442"
]

/**
 * Line dash patterns, one per series (ECharts `lineStyle.type`), so overlapping lines stay visible.
 *
 * @example
 * ```ts
 * import { DASHES } from "./model.js"
 * new Set(DASHES.map((d) => JSON.stringify(d))).size // => 8
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const DASHES: ReadonlyArray<string | ReadonlyArray<number>> = [
  "solid",
  [8, 4],
  [2, 3],
  [10, 3, 2, 3],
  [4, 2],
  [14, 4],
  [2, 6],
  [6, 2, 2, 2, 2, 2]
]

/**
 * Point markers (ECharts symbols), one per series.
 *
 * @example
 * ```ts
 * import { SYMBOLS } from "./model.js"
 * SYMBOLS[0] // => "circle"
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const SYMBOLS: ReadonlyArray<string> = [
  "circle",
  "rect",
  "triangle",
  "diamond",
  "emptyCircle",
  "emptyRect",
  "emptyTriangle",
  "emptyDiamond"
]
