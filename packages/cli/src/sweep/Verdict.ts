/**
 * Issue 16's verdict over a sweep: in each block of the grid (trace, rate, DP size, front end), does
 * one of loadledger's own policies beat the best of all the others on TTFT p99, ITL p99 and sync
 * wait at once? The rule, stated once here and printed with the table:
 *
 * - "others" are the policies that reproduce upstream (`PolicyEntry.reference`), finished every
 *   request of the block and kept up with its arrivals (`keptUp` of @loadledger/sim: the last
 *   request started within 2% of the arrival span after the last arrival). A policy that rejected or
 *   stalled requests has no comparable tail (and did not keep up: `keptUp` is false for it), and one that fell behind serves a shrinking share of the load at a time: its queue, not
 *   its step times, sets its latencies (a policy that herds every request onto one rank runs seven
 *   idle ranks and shows the lowest ITL p99 with a TTFT p99 of an hour);
 * - for each of TTFT p99 and ITL p99 the bar is the best (lowest) other value, whichever policy
 *   holds it; where the others' values spread by more than 5% ((max - min) / min), ours must be
 *   at least 2% lower, else merely lower;
 * - the sync-wait share must be lower than the lowest other share;
 * - "ours" wins the block when one of our policies meets all three, finished every request and
 *   kept up. Rows written before `keptUp` existed are judged on finishing alone.
 *
 * @since 0.3.0
 */
import type { SummaryRow } from "./Summary.js"

/**
 * One block's verdict: the best other values (with their holders), the spreads, our policy that
 * wins (or, when none does, the one closest to winning) with its values and gaps (fractions:
 * -0.05 = 5% below the bar), and `win`.
 *
 * @category sweep
 * @since 0.3.0
 */
export interface VerdictRow {
  readonly block: string
  readonly bestTtft: { readonly policy: string; readonly seconds: number }
  readonly bestItl: { readonly policy: string; readonly ms: number }
  readonly bestSync: { readonly policy: string; readonly share: number }
  readonly ttftSpread: number
  readonly itlSpread: number
  readonly ours: {
    readonly policy: string
    readonly ttftSeconds: number
    readonly itlMs: number
    readonly syncShare: number
    readonly ttftGap: number
    readonly itlGap: number
    readonly syncGap: number
  }
  readonly win: boolean
}

const SPREAD = 0.05
const MARGIN = 0.02

const complete = (r: SummaryRow) =>
  r.finished === r.total && r.keptUp !== false && r.ttftP99Seconds !== undefined && r.itlP99Ms !== undefined

const argmin = (rs: ReadonlyArray<SummaryRow>, f: (r: SummaryRow) => number): SummaryRow =>
  rs.reduce((a, b) => (f(b) < f(a) ? b : a))

/** How far `v` is from meeting the bar `best` (negative = met with room); the margin applies when the others spread. */
const gapTo = (v: number, best: number, spread: number): number =>
  v / best - (spread > SPREAD ? 1 - MARGIN : 1)

const ttft = (r: SummaryRow) => r.ttftP99Seconds!
const itl = (r: SummaryRow) => r.itlP99Ms!

/** The rows of each block (trace, rate, DP size, front end), in the order first seen. */
const blocksOf = (rows: ReadonlyArray<SummaryRow>): Map<string, Array<SummaryRow>> => {
  const blocks = new Map<string, Array<SummaryRow>>()
  for (const r of rows) {
    const k = `${r.trace} at ${r.rate}x, DP ${r.dp}, ${r.frontEnd}`
    blocks.set(k, [...(blocks.get(k) ?? []), r])
  }
  return blocks
}

/** A block's bar, from complete rows: the best other per metric and the others' p99 spreads. */
const barOf = (others: ReadonlyArray<SummaryRow>) => {
  const spread = (f: (r: SummaryRow) => number) => {
    const vs = others.map(f)
    return (Math.max(...vs) - Math.min(...vs)) / Math.min(...vs)
  }
  return {
    bT: argmin(others, ttft),
    bI: argmin(others, itl),
    bS: argmin(others, (r) => r.syncWaitShare),
    ttftSpread: spread(ttft),
    itlSpread: spread(itl)
  }
}

/** One complete row against a bar: its three gaps, the worst of them, and whether it wins. */
const judge = (r: SummaryRow, bar: ReturnType<typeof barOf>) => {
  const ttftGap = gapTo(ttft(r), ttft(bar.bT), bar.ttftSpread)
  const itlGap = gapTo(itl(r), itl(bar.bI), bar.itlSpread)
  const syncGap = r.syncWaitShare / bar.bS.syncWaitShare - 1
  return {
    r,
    ttftGap,
    itlGap,
    syncGap,
    worst: Math.max(ttftGap, itlGap, syncGap),
    win: ttftGap < 0 && itlGap < 0 && syncGap < 0
  }
}

/**
 * The verdict per block of a sweep's rows. `isOurs(policy)` says which policies are loadledger's own
 * (the CLI passes `!entry.reference`). Blocks without a complete run on both sides are left out.
 *
 * @example
 * ```ts
 * import { verdictRows } from "./Verdict.js"
 * const row = (policy: string, ttft: number, itl: number, sync: number) => ({
 *   id: policy, trace: "t", rate: 1, dp: 8, frontEnd: "sglang x1", policy, status: "Completed", finished: 10, total: 10, rejected: 0, stalled: 0,
 *   ttftP50Seconds: 1, ttftP99Seconds: ttft, itlP50Ms: 10, itlP99Ms: itl, e2eP99Seconds: 9,
 *   syncWaitShare: sync, idleRankStepShare: 0, prefixCacheHitRate: 0, keptUp: true, wallSeconds: 1
 * })
 * const [v] = verdictRows([row("upstream-a", 2.0, 100, 0.3), row("upstream-b", 3.0, 90, 0.2), row("ours", 1.9, 85, 0.19)], (p) => p === "ours")
 * v?.bestTtft // => { policy: "upstream-a", seconds: 2 }
 * v?.win // => true
 * // the others spread by 50% (TTFT) and 11% (ITL), so ours needs 2% below each best: 1.9 / 2.0 = 0.95
 * Number(v?.ours.ttftGap.toFixed(3)) // => -0.03
 * ```
 *
 * @category sweep
 * @since 0.3.0
 */
export const verdictRows = (
  rows: ReadonlyArray<SummaryRow>,
  isOurs: (policy: string) => boolean
): ReadonlyArray<VerdictRow> => {
  const out: Array<VerdictRow> = []
  for (const [block, rs] of blocksOf(rows)) {
    const others = rs.filter((r) => !isOurs(r.policy) && complete(r))
    const ours = rs.filter((r) => isOurs(r.policy) && complete(r))
    if (others.length === 0 || ours.length === 0) continue
    const bar = barOf(others)
    // a winner has every gap below zero; otherwise the one whose worst gap is smallest
    const pick = ours.map((r) => judge(r, bar)).reduce((a, b) => (b.worst < a.worst ? b : a))
    out.push({
      block,
      bestTtft: { policy: bar.bT.policy, seconds: ttft(bar.bT) },
      bestItl: { policy: bar.bI.policy, ms: itl(bar.bI) },
      bestSync: { policy: bar.bS.policy, share: bar.bS.syncWaitShare },
      ttftSpread: bar.ttftSpread,
      itlSpread: bar.itlSpread,
      ours: {
        policy: pick.r.policy,
        ttftSeconds: ttft(pick.r),
        itlMs: itl(pick.r),
        syncShare: pick.r.syncWaitShare,
        ttftGap: pick.ttftGap,
        itlGap: pick.itlGap,
        syncGap: pick.syncGap
      },
      win: pick.win
    })
  }
  return out
}

/**
 * The same rule turned on the field: each upstream policy in turn is judged, block by block, against
 * the best of the other upstream policies (ours left out, and any whose TTFT p99, ITL p99 and sync
 * wait all equal its own: another name for the same rule, as `round-robin` and `smg/round-robin`).
 * `won` counts the blocks it would win, `blocks` the blocks it was judged in (it finished and kept
 * up, and another upstream policy did);
 * sorted by `won`, most first, then by name. Where no upstream policy wins a block, the bar is held
 * by different policies on different metrics: a trade-off between them, which a policy that wins
 * must beat at every corner at once.
 *
 * @example
 * ```ts
 * import { fieldWins } from "./Verdict.js"
 * const row = (policy: string, ttft: number, itl: number, sync: number) => ({
 *   id: policy, trace: "t", rate: 1, dp: 8, frontEnd: "sglang x1", policy, status: "Completed", finished: 10, total: 10, rejected: 0, stalled: 0,
 *   ttftP50Seconds: 1, ttftP99Seconds: ttft, itlP50Ms: 10, itlP99Ms: itl, e2eP99Seconds: 9,
 *   syncWaitShare: sync, idleRankStepShare: 0, prefixCacheHitRate: 0, keptUp: true, wallSeconds: 1
 * })
 * // "a" is best on TTFT, "b" on ITL and sync: neither beats the other on all three
 * fieldWins([row("a", 2.0, 100, 0.3), row("b", 3.0, 90, 0.2), row("ours", 1.9, 85, 0.19)], (p) => p === "ours")
 * // => [{ policy: "a", won: 0, blocks: 1 }, { policy: "b", won: 0, blocks: 1 }]
 * ```
 *
 * @category sweep
 * @since 0.4.0
 */
export const fieldWins = (
  rows: ReadonlyArray<SummaryRow>,
  isOurs: (policy: string) => boolean
): ReadonlyArray<{ readonly policy: string; readonly won: number; readonly blocks: number }> => {
  const tally = new Map<string, { won: number; blocks: number }>()
  for (const rs of blocksOf(rows).values()) {
    const field = rs.filter((r) => !isOurs(r.policy) && complete(r))
    for (const r of field) {
      // a twin (another name for the same rule: identical figures) is no bar: nothing beats itself
      const others = field.filter(
        (o) =>
          o.ttftP99Seconds !== r.ttftP99Seconds ||
          o.itlP99Ms !== r.itlP99Ms ||
          o.syncWaitShare !== r.syncWaitShare
      )
      if (others.length === 0) continue
      const t = tally.get(r.policy) ?? { won: 0, blocks: 0 }
      tally.set(r.policy, { won: t.won + (judge(r, barOf(others)).win ? 1 : 0), blocks: t.blocks + 1 })
    }
  }
  return [...tally]
    .map(([policy, t]) => ({ policy, ...t }))
    .sort((a, b) => b.won - a.won || (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0))
}

const sig = (v: number) => Number(v.toPrecision(3)).toString()
const signed = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}%`
const vsBest = (v: number, best: number) => signed(v / best - 1)

/**
 * The verdict as Markdown: the rule, one row per block, the count of blocks won and, given
 * `field` ({@link fieldWins} of the same rows), how the upstream policies fare by the same rule.
 *
 * @example
 * ```ts
 * import { verdictMarkdown } from "./Verdict.js"
 * verdictMarkdown([]) // => ""
 * ```
 *
 * @category sweep
 * @since 0.3.0
 */
export const verdictMarkdown = (
  rows: ReadonlyArray<VerdictRow>,
  field: ReadonlyArray<{ readonly policy: string; readonly won: number; readonly blocks: number }> = []
): string => {
  if (rows.length === 0) return ""
  const won = rows.filter((r) => r.win).length
  const top = field[0]
  return [
    `**Verdict (issue 16): ${won} of ${rows.length} blocks won by a loadledger policy**`,
    "",
    ...(top === undefined
      ? []
      : [
          top.won === 0
            ? `The same rule turned on the field (each upstream policy against the best of the other upstream policies): none of the ${field.length} wins a block.`
            : `The same rule turned on the field (each upstream policy against the best of the other upstream policies): the most, ${top.policy}, wins ${top.won} of ${top.blocks} blocks.`,
          ""
        ]),
    "Bar per block: the best (lowest) TTFT p99, ITL p99 and sync-wait share among the upstream policies",
    "that finished every request and kept up with the arrivals (the last request started within 2% of",
    "the arrival span after the last arrival; `behind` in the tables otherwise); ours must keep up and be",
    "lower on all three, by >= 2% on a p99 where the others spread by > 5%. Percentages: ours against",
    "each best (negative = lower).",
    "",
    "| block | best other TTFT p99 s | best other ITL p99 ms | best other sync | others' spread TTFT / ITL | ours (closest to winning) | TTFT p99 s | ITL p99 ms | sync | verdict |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.block} | ${sig(r.bestTtft.seconds)} (${r.bestTtft.policy}) | ${sig(r.bestItl.ms)} (${r.bestItl.policy}) | ${(r.bestSync.share * 100).toFixed(1)}% (${r.bestSync.policy}) | ${(r.ttftSpread * 100).toFixed(0)}% / ${(r.itlSpread * 100).toFixed(0)}% | ${r.ours.policy} | ${sig(r.ours.ttftSeconds)} (${vsBest(r.ours.ttftSeconds, r.bestTtft.seconds)}) | ${sig(r.ours.itlMs)} (${vsBest(r.ours.itlMs, r.bestItl.ms)}) | ${(r.ours.syncShare * 100).toFixed(1)}% (${signed(r.ours.syncGap)}) | ${r.win ? "**win**" : "miss"} |`
    ),
    ""
  ].join("\n")
}
