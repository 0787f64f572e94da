/**
 * How `loadledger reproduce` prints: the `--list` lines (name, title, source) and one scenario's
 * rows as text (published, modelled, ratio, ratio error) or JSON rows.
 *
 * @since 0.7.0
 */
import { type ReproduceRow, type ReproduceScenario, ratioError } from "./Scenario.js"

const num = (x: number): string => {
  if (!Number.isFinite(x)) return String(x)
  const a = Math.abs(x)
  return a >= 1000 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 0.1 ? x.toFixed(3) : x.toPrecision(3)
}

const pct = (e: number | undefined): string =>
  e === undefined ? "n/a" : `${e >= 0 ? "+" : ""}${(e * 100).toFixed(1)}%`

/**
 * The `reproduce --list` text: one block per scenario (name and title, then its source).
 *
 * @example
 * ```ts
 * import { listText } from "./format.js"
 * const s = { name: "demo", title: "a demo", source: { citation: "Someone, 2025", url: "https://x" }, assumptions: ["one"], run: async () => [] }
 * listText([s]) // => "demo  a demo\n      source: Someone, 2025 (https://x)"
 * listText([]) // => "no scenarios registered"
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const listText = (list: ReadonlyArray<ReproduceScenario>): string => {
  if (list.length === 0) return "no scenarios registered"
  const width = Math.max(...list.map((s) => s.name.length))
  return list
    .map(
      (s) =>
        `${s.name.padEnd(width)}  ${s.title}\n${" ".repeat(width + 2)}source: ${s.source.citation} (${s.source.url})`
    )
    .join("\n")
}

/**
 * One scenario's text report: title, source, the assumptions, then a table of its rows with the
 * ratio modelled / published and its error, and the largest absolute ratio error.
 *
 * @example
 * ```ts
 * import { rowsText } from "./format.js"
 * const s = { name: "demo", title: "a demo", source: { citation: "Someone, 2025", url: "https://x" }, assumptions: ["one"], run: async () => [] }
 * const text = rowsText(s, [{ metric: "ttft, ms", published: 400, modelled: 440 }])
 * text.split("\n").at(-2) // => "ttft, ms      400.0     440.0  1.100  +10.0%"
 * text.split("\n").at(-1) // => "largest |ratio error|: 10.0% (ttft, ms)"
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const rowsText = (s: ReproduceScenario, rows: ReadonlyArray<ReproduceRow>): string => {
  const head = ["metric", "published", "modelled", "ratio", "error"]
  const cells = rows.map((r) => {
    const e = ratioError(r)
    return [r.metric, num(r.published), num(r.modelled), e === undefined ? "n/a" : (1 + e).toFixed(3), pct(e)]
  })
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: ReadonlyArray<string>) =>
    c
      .map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!)))
      .join("  ")
      .trimEnd()
  const errors = rows.map((r) => ({ r, e: ratioError(r) })).filter((x) => x.e !== undefined)
  const worst = errors.reduce<{ r: ReproduceRow; e: number } | undefined>(
    (w, x) => (w === undefined || Math.abs(x.e!) > Math.abs(w.e) ? { r: x.r, e: x.e! } : w),
    undefined
  )
  return [
    `${s.name}: ${s.title}`,
    `source: ${s.source.citation} (${s.source.url})`,
    "assumptions (what the publication leaves open):",
    ...s.assumptions.map((a) => `  - ${a}`),
    "",
    line(head),
    ...cells.map(line),
    worst === undefined
      ? "no row has a ratio"
      : `largest |ratio error|: ${(Math.abs(worst.e) * 100).toFixed(1)}% (${worst.r.metric})`
  ].join("\n")
}

/**
 * The `--json` output of one scenario: its name, source, assumptions and rows, each row with its
 * `ratioError` (null where there is none).
 *
 * @example
 * ```ts
 * import { rowsJson } from "./format.js"
 * const s = { name: "demo", title: "a demo", source: { citation: "Someone, 2025", url: "https://x" }, assumptions: ["one"], run: async () => [] }
 * rowsJson(s, [{ metric: "ttft, ms", published: 400, modelled: 440 }]).rows
 * // => [{ metric: "ttft, ms", published: 400, modelled: 440, ratioError: 0.1 }]
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const rowsJson = (s: ReproduceScenario, rows: ReadonlyArray<ReproduceRow>) => ({
  name: s.name,
  title: s.title,
  source: s.source,
  assumptions: s.assumptions,
  rows: rows.map((r) => ({
    metric: r.metric,
    published: r.published,
    modelled: r.modelled,
    ratioError: ratioError(r) ?? null
  }))
})
