/**
 * A goodput leaderboard's rows and board per engine, and how one is ranked from its subjects'
 * estimates (`rankBoard`): the shapes `run.ts` fills and `table.ts` / `pairs.ts` print.
 *
 * @since 0.6.0
 */
import type { EngineName } from "@loadledger/sim"
import {
  compareGoodput,
  type GoodputComparison,
  type GoodputEstimate,
  type GoodputProbe
} from "@loadledger/sim"
import type { Subject } from "./jobs.js"

/**
 * One subject's row of the leaderboard: its goodput estimate, its share of the balance bound
 * (ratio of the mean goodputs), its verdict against the engine's best policy (absent for the best
 * itself and for the bound), the curve (mean attainment and its t interval at each curve rate),
 * each window's probes, and the most requests any probe rejected.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface LeaderboardRow {
  readonly policy: string
  readonly kind: Subject["kind"]
  readonly engine: EngineName
  readonly goodput: GoodputEstimate
  readonly shareOfBound: number
  readonly vsBest?: GoodputComparison | undefined
  readonly curve: ReadonlyArray<{
    readonly rate: number
    readonly requestsPerSecond: number
    readonly attainment: number
    readonly ci: readonly [number, number]
  }>
  readonly probes: ReadonlyArray<ReadonlyArray<GoodputProbe>>
  readonly rejected: number
}

/**
 * The leaderboard of one engine: the rows ranked by mean goodput (registered policies, then the
 * clairvoyant reference and the balance bound last), the best policy, and every pairwise verdict
 * between the registered policies and the clairvoyant one.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface EngineBoard {
  readonly engine: EngineName
  readonly rows: ReadonlyArray<LeaderboardRow>
  readonly best: string
  readonly verdicts: ReadonlyArray<{
    readonly a: string
    readonly b: string
    readonly ratio: number
    readonly ci: readonly [number, number]
    readonly verdict: GoodputComparison["verdict"]
  }>
}

/**
 * One subject's measured goodput on every window, ready to rank: see {@link rankBoard}.
 *
 * @category goodput
 * @since 0.5.0
 */
export interface RankInput {
  readonly policy: string
  readonly kind: Subject["kind"]
  readonly windows: ReadonlyArray<number>
  readonly goodput: GoodputEstimate
  readonly probes: ReadonlyArray<ReadonlyArray<GoodputProbe>>
  readonly rejected: number
  readonly curve: LeaderboardRow["curve"]
}

/**
 * Rank one engine's subjects (registered policies, at most one clairvoyant reference and one
 * balance bound): the best is the registered policy with the highest mean goodput; each other
 * subject gets its paired verdict against it and its share of the bound (NaN without a bound or
 * when the bound's goodput is 0); rows are ordered policies by goodput, then the reference, then
 * the bound; `verdicts` holds every pair of non-bound subjects. Pure; used by `goodput` and by
 * sweeps' goodput cells. `subjects` must hold at least one registered policy.
 *
 * @example
 * ```ts
 * import { estimateGoodput } from "@loadledger/sim"
 * import { type RankInput, rankBoard } from "./board.js"
 * const subject = (policy: string, kind: RankInput["kind"], windows: Array<number>): RankInput => {
 *   const goodput = estimateGoodput(windows, 2)
 *   if (goodput._tag === "GoodputError") throw new Error(goodput.message)
 *   return { policy, kind, windows, goodput, probes: [], rejected: 0, curve: [] }
 * }
 * const board = rankBoard("sglang", [subject("a", "policy", [4, 5, 6]), subject("b", "policy", [3, 4, 5]), subject("balance-bound", "bound", [8, 10, 12])], 0.95)
 * board.best // => "a"
 * board.rows.map((r) => r.policy) // => ["a", "b", "balance-bound"]
 * board.rows[1]!.shareOfBound // => 0.4
 * board.rows[1]!.vsBest?.verdict // => "worse"
 * ```
 *
 * @category goodput
 * @since 0.5.0
 */
export const rankBoard = (
  engine: EngineName,
  subjects: ReadonlyArray<RankInput>,
  confidence: number
): EngineBoard => {
  const policies = subjects.filter((p) => p.kind === "policy")
  const best = policies.reduce((a, b) => (b.goodput.requestsPerSecond > a.goodput.requestsPerSecond ? b : a))
  const bound = subjects.find((p) => p.kind === "bound")
  const rows = subjects.map((p): LeaderboardRow => {
    const vs =
      p === best || p.kind === "bound" ? undefined : compareGoodput(p.windows, best.windows, confidence)
    return {
      policy: p.policy,
      kind: p.kind,
      engine,
      goodput: p.goodput,
      shareOfBound:
        bound !== undefined && bound.goodput.requestsPerSecond > 0
          ? p.goodput.requestsPerSecond / bound.goodput.requestsPerSecond
          : Number.NaN,
      vsBest: vs === undefined || vs._tag === "GoodputError" ? undefined : vs,
      curve: p.curve,
      probes: p.probes,
      rejected: p.rejected
    }
  })
  const order = (r: LeaderboardRow) => (r.kind === "policy" ? 0 : r.kind === "clairvoyant" ? 1 : 2)
  const ranked = [...rows].sort(
    (a, b) => order(a) - order(b) || b.goodput.requestsPerSecond - a.goodput.requestsPerSecond
  )
  const compared = subjects.filter((p) => p.kind !== "bound")
  const verdicts = compared.flatMap((a, x) =>
    compared.slice(x + 1).flatMap((b) => {
      const c = compareGoodput(a.windows, b.windows, confidence)
      return c._tag === "GoodputError"
        ? []
        : [{ a: a.policy, b: b.policy, ratio: c.ratio, ci: c.ci, verdict: c.verdict }]
    })
  )
  return { engine, rows: ranked, best: best.policy, verdicts }
}
