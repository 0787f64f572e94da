// Issue 16's verdict rule over sweep rows (packages/cli/src/sweep/Verdict.ts): best other per metric,
// 2% margin only where the others spread by more than 5%, sync wait strictly lower, incomplete runs out.
import { describe, expect, it } from "vitest"
import type { SummaryRow } from "../src/sweep/Summary.js"
import { markdownTable } from "../src/sweep/Summary.js"
import { fieldWins, verdictMarkdown, verdictRows } from "../src/sweep/Verdict.js"

const row = (
  policy: string,
  ttft: number,
  itl: number,
  sync: number,
  finished = 10,
  keptUp: boolean | undefined = true
): SummaryRow => ({
  id: policy,
  trace: "t",
  rate: 1,
  dp: 8,
  frontEnd: "sglang x1",
  policy,
  status: finished === 10 ? "Completed" : "NoProgress",
  finished,
  total: 10,
  rejected: 0,
  stalled: 0,
  ttftP50Seconds: 1,
  ttftP99Seconds: ttft,
  itlP50Ms: 10,
  itlP99Ms: itl,
  e2eP99Seconds: 9,
  syncWaitShare: sync,
  idleRankStepShare: 0,
  prefixCacheHitRate: 0,
  keptUp,
  wallSeconds: 1
})
const ours = (p: string) => p.startsWith("ours")

describe("verdictRows", () => {
  it("a policy that fell behind the arrivals sets no bar, and ours must keep up to win", () => {
    // "herd" finished everything with the lowest ITL p99 by running one rank: it fell behind
    const others = [row("a", 2.0, 100, 0.3), row("herd", 900, 50, 0.5, 10, false)]
    const [v] = verdictRows([...others, row("ours", 1.9, 90, 0.2)], ours)
    expect(v!.bestItl).toEqual({ policy: "a", ms: 100 })
    expect(v!.ttftSpread).toBe(0)
    expect(v!.win).toBe(true)
    const [behind] = verdictRows([...others, row("ours", 1.9, 90, 0.2, 10, false)], ours)
    expect(behind).toBeUndefined()
    // rows written before keptUp existed (undefined) are judged on finishing alone
    const [old] = verdictRows(
      [row("a", 2.0, 100, 0.3, 10, undefined), row("ours", 1.9, 90, 0.2, 10, undefined)],
      ours
    )
    expect(old!.win).toBe(true)
  })

  it("each metric's bar is its own best other; with a > 5% spread ours must be 2% below it", () => {
    const others = [row("a", 2.0, 100, 0.3), row("b", 3.0, 90, 0.2)]
    // 1.97 s is 1.5% below a's 2.0 s: lower, but not by the 2% a 50% spread asks
    const [near] = verdictRows([...others, row("ours", 1.97, 80, 0.1)], ours)
    expect(near!.bestTtft).toEqual({ policy: "a", seconds: 2 })
    expect(near!.bestItl).toEqual({ policy: "b", ms: 90 })
    expect(near!.ttftSpread).toBeCloseTo(0.5, 12)
    expect(near!.ours.ttftGap).toBeCloseTo(0.985 - 0.98, 12)
    expect(near!.win).toBe(false)
    const [far] = verdictRows([...others, row("ours", 1.95, 80, 0.1)], ours)
    expect(far!.win).toBe(true)
  })

  it("where the others agree within 5%, merely lower is enough", () => {
    const [v] = verdictRows(
      [row("a", 2.0, 100, 0.3), row("b", 2.05, 101, 0.3), row("ours", 1.99, 99.5, 0.29)],
      ours
    )
    expect(v!.ttftSpread).toBeCloseTo(0.025, 12)
    expect(v!.win).toBe(true)
  })

  it("sync wait must be strictly lower than the lowest other; a tie is a miss", () => {
    const [v] = verdictRows([row("a", 2.0, 100, 0.3), row("ours", 1.0, 50, 0.3)], ours)
    expect(v!.ours.syncGap).toBe(0)
    expect(v!.win).toBe(false)
  })

  it("a run that left requests unfinished is no bar (others) and no winner (ours)", () => {
    const rows = [row("a", 2.0, 100, 0.3), row("stalled", 0.1, 1, 0.01, 3), row("ours-x", 1.0, 50, 0.1, 9)]
    expect(verdictRows(rows, ours)).toEqual([]) // no complete run of ours
    const [v] = verdictRows([...rows, row("ours-y", 1.5, 80, 0.2)], ours)
    expect(v!.bestTtft.policy).toBe("a")
    expect(v!.ours.policy).toBe("ours-y")
    expect(v!.win).toBe(true)
  })

  it("a run that rejected requests is no bar (others) and no winner (ours), even one that says it kept up", () => {
    // Completed with rejections, as a policy refusing out-of-range pins; keptUp true as
    // rows written before keptUp counted rejections held it
    const rejected = (policy: string, finished: number, ttft: number) => ({
      ...row(policy, ttft, 1, 0.01, finished),
      status: "Completed",
      rejected: 10 - finished,
      keptUp: true
    })
    const rows = [row("a", 2.0, 100, 0.3), rejected("shed", 9, 0.1), rejected("ours-shed", 7, 0.1)]
    expect(verdictRows(rows, ours)).toEqual([])
    const [v] = verdictRows([...rows, row("ours-y", 1.5, 80, 0.2)], ours)
    expect([v!.bestTtft.policy, v!.bestItl.policy, v!.bestSync.policy, v!.ours.policy]).toEqual([
      "a",
      "a",
      "a",
      "ours-y"
    ])
  })

  it("no winner: the one of ours closest to winning (smallest worst gap) is shown with its gaps", () => {
    const rows = [row("a", 2.0, 100, 0.3), row("ours-far", 4.0, 50, 0.1), row("ours-close", 2.1, 95, 0.25)]
    const [v] = verdictRows(rows, ours)
    expect(v!.ours.policy).toBe("ours-close")
    expect(v!.ours.ttftGap).toBeCloseTo(0.05, 12)
    expect(v!.win).toBe(false)
    const md = verdictMarkdown([v!])
    expect(md).toContain("**Verdict (issue 16): 0 of 1 blocks won by a loadledger policy**")
    expect(md).toContain(
      "| t at 1x, DP 8, sglang x1 | 2 (a) | 100 (a) | 30.0% (a) | 0% / 0% | ours-close | 2.1 (+5.0%) | 95 (-5.0%) | 25.0% (-16.7%) | miss |"
    )
  })
})

describe("fieldWins: the same rule turned on the upstream policies", () => {
  const inBlock = (r: SummaryRow, trace: string): SummaryRow => ({ ...r, id: `${trace}-${r.policy}`, trace })

  it("counts, per upstream policy, the blocks where it beats the best of the other upstream ones on all three", () => {
    const rows = [
      // block t1: "a" is lowest on all three by the margins (spread > 5%: 2% needed)
      ...[row("a", 1.0, 80, 0.1), row("b", 2.0, 100, 0.3), row("c", 3.0, 90, 0.2)].map((r) =>
        inBlock(r, "t1")
      ),
      // block t2: "a" holds TTFT, "c" ITL and sync: a trade-off, nobody wins
      ...[row("a", 1.0, 100, 0.3), row("b", 2.0, 100, 0.3), row("c", 3.0, 80, 0.1)].map((r) =>
        inBlock(r, "t2")
      ),
      // ours is never judged and never a bar: without it "c" would not be beaten on ITL in t1 either
      inBlock(row("ours", 0.1, 1, 0.01), "t1"),
      inBlock(row("ours", 0.1, 1, 0.01), "t2")
    ]
    expect(fieldWins(rows, ours)).toEqual([
      { policy: "a", won: 1, blocks: 2 },
      { policy: "b", won: 0, blocks: 2 },
      { policy: "c", won: 0, blocks: 2 }
    ])
  })

  it("a twin (same three figures under another name) is no bar, so a rule with two names can still win", () => {
    const rows = [row("a", 1.0, 80, 0.1), row("a-twin", 1.0, 80, 0.1), row("b", 2.0, 100, 0.3)]
    expect(fieldWins(rows, ours)).toEqual([
      { policy: "a", won: 1, blocks: 1 },
      { policy: "a-twin", won: 1, blocks: 1 },
      { policy: "b", won: 0, blocks: 1 }
    ])
  })

  it("a policy that did not finish or keep up is neither judged nor a bar; a block of one is not judged", () => {
    const rows = [
      ...[
        row("a", 1.0, 80, 0.1),
        row("herd", 0.5, 10, 0.01, 10, false),
        row("stalled", 0.5, 10, 0.01, 3)
      ].map((r) => inBlock(r, "t1")),
      inBlock(row("a", 1.0, 80, 0.1), "t2")
    ]
    // t1: "a" against nothing complete is not judged; t2: alone
    expect(fieldWins(rows, ours)).toEqual([])
    const withB = [...rows, inBlock(row("b", 2.0, 100, 0.3), "t1")]
    expect(fieldWins(withB, ours)).toEqual([
      { policy: "a", won: 1, blocks: 1 },
      { policy: "b", won: 0, blocks: 1 }
    ])
  })

  it("the verdict's Markdown says how the field fares by the same rule", () => {
    const rows = [row("a", 2.0, 100, 0.3), row("b", 3.0, 90, 0.2), row("ours", 1.9, 85, 0.19)]
    const md = verdictMarkdown(verdictRows(rows, ours), fieldWins(rows, ours))
    expect(md).toContain("none of the 2 wins a block.")
    const lopsided = [row("a", 2.0, 100, 0.3), row("b", 1.0, 50, 0.1), row("ours", 0.9, 45, 0.09)]
    expect(verdictMarkdown(verdictRows(lopsided, ours), fieldWins(lopsided, ours))).toContain(
      "the most, b, wins 1 of 1 blocks."
    )
    // without the field, no line about it
    expect(verdictMarkdown(verdictRows(rows, ours))).not.toContain("turned on the field")
  })
})

describe("markdownTable status", () => {
  it("says what simulate says: ok only when every request finished and the run kept up (or cannot tell)", () => {
    const table = markdownTable([
      row("kept", 1, 10, 0.1),
      row("short", 1, 10, 0.1, 10, undefined),
      row("herd", 1, 10, 0.1, 10, false),
      { ...row("stalled", 1, 10, 0.1, 5), stalled: 5 },
      // every request rejected (a policy that places none): was "ok 0/10"
      { ...row("refused", 1, 10, 0.1, 0), status: "Completed", rejected: 10, keptUp: true },
      { ...row("shed", 1, 10, 0.1, 7), status: "Completed", rejected: 3, keptUp: false }
    ])
    expect(table).toContain("| kept |")
    expect(
      table
        .split("\n")
        .filter((l) => l.startsWith("| "))
        .map((l) => l.split("|").at(-2)?.trim())
    ).toEqual([
      "status",
      "ok 10/10",
      "ok 10/10",
      "behind 10/10",
      "NoProgress 5/10, 5 stalled",
      "incomplete 0/10, 10 rejected",
      "incomplete 7/10, 3 rejected"
    ])
  })
})
