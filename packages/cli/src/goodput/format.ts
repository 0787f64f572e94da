/**
 * How the goodput tables write numbers, ratios and verdicts: shared by the terminal table
 * (`table.ts`) and the HTML report's (`tableHtml.ts`).
 *
 * @since 0.6.0
 */
import type { GoodputComparison } from "@loadledger/sim"
import type { LeaderboardRow } from "./board.js"

/**
 * A number with `d` decimals (default 2); "-" when it is not finite (NaN: no estimate).
 *
 * @example
 * ```ts
 * import { f } from "./format.js"
 * f(1.234) // => "1.23"
 * f(Number.NaN) // => "-"
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "-")
/**
 * A share as a percentage with one decimal; "-" when it is not finite.
 *
 * @example
 * ```ts
 * import { pct } from "./format.js"
 * pct(0.1234) // => "12.3%"
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "-")
/**
 * A ratio as a signed percentage.
 *
 * @example
 * ```ts
 * import { signed } from "./format.js"
 * signed(1.034) // => "+3.4%"
 * signed(0.96) // => "-4.0%"
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const signed = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`

/**
 * A verdict against the best, in words: "best", "+1.2% [+0.3%, +2.0%] better", "-4.0% [-5.1%,
 * -2.9%] worse", "no significant difference (-0.3% [-1.1%, +0.5%])", or "not comparable: why".
 *
 * @example
 * ```ts
 * import { verdictText } from "./format.js"
 * verdictText({ _tag: "GoodputComparison", ratio: 0.96, ci: [0.949, 0.971], confidence: 0.95, verdict: "worse", excludedWindows: 0 })
 * // => "worse: -4.0% [-5.1%, -2.9%]"
 * verdictText(undefined) // => "best"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const verdictText = (c: GoodputComparison | undefined): string => {
  if (c === undefined) return "best"
  if (c.verdict === "not comparable")
    return `not comparable: ${(c.reason ?? "").replace("the first policy", "this policy").replace("the second policy", "the best")}`
  const span = `${signed(c.ratio)} [${signed(c.ci[0])}, ${signed(c.ci[1])}]`
  return c.verdict === "no significant difference"
    ? `no significant difference (${span})`
    : `${c.verdict}: ${span}`
}

/**
 * A leaderboard row's name: the policy, or what a reference row stands for.
 *
 * @example
 * ```ts
 * import { label } from "./format.js"
 * label({ policy: "balance-bound", kind: "bound" } as never) // => "balance-bound (ceiling)"
 * ```
 *
 * @category goodput
 * @since 0.6.0
 */
export const label = (r: LeaderboardRow) =>
  r.kind === "clairvoyant"
    ? "clairvoyant (reference)"
    : r.kind === "bound"
      ? "balance-bound (ceiling)"
      : r.policy
