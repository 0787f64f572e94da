/**
 * `loadledger compare`'s table: every pair of the compared policies (and the clairvoyant
 * reference), the goodput ratio of the first to the second with its paired interval, and the
 * verdict in words.
 *
 * @since 0.6.0
 */
import Table from "cli-table3"
import type { EngineBoard } from "./run.js"

const signed = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`

/**
 * One pair's verdict in words: "a serves 12.0% more than b [+8.0%, +16.0%]: better", or "no
 * significant difference (-0.3% [-1.1%, +0.5%])".
 *
 * @example
 * ```ts
 * import { pairText } from "./pairs.js"
 * pairText({ a: "x", b: "y", ratio: 1.12, ci: [1.08, 1.16], verdict: "better" })
 * // => "x better than y: +12.0% [+8.0%, +16.0%]"
 * pairText({ a: "x", b: "y", ratio: 0.997, ci: [0.989, 1.005], verdict: "no significant difference" })
 * // => "no significant difference: -0.3% [-1.1%, +0.5%]"
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const pairText = (v: EngineBoard["verdicts"][number]): string => {
  const span = `${signed(v.ratio)} [${signed(v.ci[0])}, ${signed(v.ci[1])}]`
  if (v.verdict === "better") return `${v.a} better than ${v.b}: ${span}`
  if (v.verdict === "worse") return `${v.a} worse than ${v.b}: ${span}`
  if (v.verdict === "no significant difference") return `no significant difference: ${span}`
  return "not comparable"
}

/**
 * The pairs table of one engine: `a`, `b`, a's goodput over b's (geometric mean of the per-window
 * ratios) with its paired interval, and the verdict.
 *
 * @example
 * ```ts
 * import { pairsTable } from "./pairs.js"
 * const board = { engine: "sglang" as const, rows: [], best: "x", verdicts: [{ a: "x", b: "y", ratio: 1.12, ci: [1.08, 1.16] as const, verdict: "better" as const }] }
 * pairsTable(board, false).includes("x better than y: +12.0% [+8.0%, +16.0%]") // => true
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const pairsTable = (b: EngineBoard, color: boolean): string => {
  const ci = b.rows[0]?.goodput.confidence ?? 0.95
  const t = new Table({
    head: ["a", "b", `goodput a / b [${Math.round(ci * 100)}% CI]`, "verdict"],
    style: color ? {} : { head: [], border: [] }
  })
  for (const v of b.verdicts)
    t.push([v.a, v.b, `${v.ratio.toFixed(3)} [${v.ci[0].toFixed(3)}, ${v.ci[1].toFixed(3)}]`, pairText(v)])
  return t.toString()
}
