/**
 * `loadledger goodput`'s outputs: the ranked terminal table, the JSON document and the HTML
 * report (attainment-versus-rate curves with interval bands).
 *
 * @since 0.5.0
 */
import Table from "cli-table3"
import type { EngineBoard } from "./board.js"
import { f, label, pct, verdictText } from "./format.js"

/**
 * The ranked table of one engine: rank, policy, goodput (requests per second) with its interval,
 * the rate as a multiple of the trace's own, the share of the balance bound, and the verdict
 * against the best policy. The clairvoyant reference and the bound close the table, unranked.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * import { boardTable } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * const text = boardTable(board, false)
 * text.includes("best") && text.includes("balance-bound (ceiling)") // => true
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const boardTable = (b: EngineBoard, color: boolean): string => {
  const ci = b.rows[0]?.goodput.confidence ?? 0.95
  const t = new Table({
    head: [
      "#",
      "policy",
      "engine",
      `goodput req/s [${Math.round(ci * 100)}% CI]`,
      "x trace rate",
      "share of bound",
      "vs best (paired)",
      "rejected"
    ],
    style: color ? { head: ["cyan"], compact: true } : { head: [], border: [], compact: true }
  })
  let rank = 0
  for (const r of b.rows) {
    const g = r.goodput
    t.push([
      r.kind === "policy" ? String(++rank) : "",
      label(r),
      r.engine,
      `${f(g.requestsPerSecond)} [${f(g.ci[0])}, ${f(g.ci[1])}]`,
      f(g.rate, 3),
      r.kind === "bound" ? "100%" : pct(r.shareOfBound),
      r.kind === "bound" ? "-" : r.policy === b.best ? "best" : verdictText(r.vsBest),
      String(r.rejected)
    ])
  }
  return t.toString()
}

/**
 * How to read the table, printed under it.
 *
 * @example
 * ```ts
 * import { HOW_TO_READ } from "./table.js"
 * HOW_TO_READ.startsWith("How to read it: goodput is the largest arrival rate") // => true
 * ```
 */
export const HOW_TO_READ = `How to read it: goodput is the largest arrival rate (requests/s) at which the SLO above is met,
found by bisection on each window of the trace and averaged over the windows, with a Student t
interval. "vs best" compares each policy with the best on the same windows (the geometric mean of
the per-window ratios, with a paired t interval): "better"/"worse" only when the interval excludes
no difference (0%, a ratio of 1), else "no significant difference". Share of bound = goodput / the balance bound's (an idealised
group where each step costs the least any placement could give it: the headroom routing could at
most win back). The clairvoyant reference knows every request's output length.`

/**
 * The JSON document: the SLO and the method, then per engine the ranked rows (goodput with `rate`,
 * `requestsPerSecond`, `ci`, `shareOfBound`, `curve`, `verdict` against the best) and every
 * pairwise verdict.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * import { boardJson } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * const doc = boardJson([board], { slo: "ttft=2s,tpot=100ms" }) as { slo: string; engines: Array<{ best: string }> }
 * doc.slo // => "ttft=2s,tpot=100ms"
 * doc.engines[0]!.best // => "a"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const boardJson = (boards: ReadonlyArray<EngineBoard>, head: Record<string, unknown>): unknown => ({
  ...head,
  engines: boards.map(engineJson)
})

/**
 * One engine's board as JSON: `engine`, `best`, the ranked `policies` (see {@link boardJson}) and
 * the pairwise `verdicts`.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * import { engineJson } from "./table.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * engineJson(board).policies.map((p) => p.verdict?.verdict) // => ["best", "worse", undefined]
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const engineJson = (b: EngineBoard) => ({
  engine: b.engine,
  best: b.best,
  policies: b.rows.map((r) => ({
    policy: r.policy,
    kind: r.kind,
    engine: r.engine,
    goodput: {
      rate: r.goodput.rate,
      requestsPerSecond: r.goodput.requestsPerSecond,
      ci: r.goodput.ci,
      rateCi: r.goodput.rateCi,
      windows: r.goodput.windows,
      unattainableWindows: r.goodput.unattainable
    },
    shareOfBound: r.shareOfBound,
    verdict:
      r.kind === "bound"
        ? undefined
        : r.policy === b.best
          ? { verdict: "best" }
          : r.vsBest && {
              verdict: r.vsBest.verdict,
              ratio: r.vsBest.ratio,
              ci: r.vsBest.ci,
              reason: r.vsBest.reason,
              excludedWindows: r.vsBest.excludedWindows
            },
    curve: r.curve,
    probes: r.probes,
    rejected: r.rejected
  })),
  verdicts: b.verdicts
})
