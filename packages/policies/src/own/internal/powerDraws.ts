/**
 * The draws, precomputed maxima and rare full scan of `makePowerOfChoices`.
 *
 * @internal
 */
import { type RngState, withDraws } from "../../peers/Draws.js"
import type { ScoreView } from "../ScoreView.js"
import { freeKvTokens, kvFeasible } from "./FreeKv.js"
import type { LedgerState } from "./LedgerState.js"
import { freshMax, maxKnownKv, maxWaitingUncached } from "./LoadView.js"
import { type Picked, pickBest, type Scoring } from "./ScoreCore.js"

/** The most free KV any healthy rank's row reports (`-Infinity` when none). */
export const maxFreeOf = (ledger: LedgerState): number => {
  let m = Number.NEGATIVE_INFINITY
  for (let r = 0; r < ledger.dpSize; r++) {
    if (!ledger.healthy[r]) continue
    const f = freeKvTokens(ledger.snapshots[r])
    if (f !== undefined && f > m) m = f
  }
  return m
}

/** `k` distinct ranks of `[0, n)` other than those in `taken` (sorted ascending, extended in place). */
export const drawDistinct = (
  draw: (bound: number) => number,
  n: number,
  k: number,
  taken: Array<number>
): Array<number> => {
  const out: Array<number> = []
  for (let j = 0; j < k; j++) {
    let x = draw(n - taken.length)
    let at = 0
    for (; at < taken.length && x >= taken[at]!; at++) x++
    taken.splice(at, 0, x)
    out.push(x)
  }
  return out
}

/** The candidates besides the cursor's rank `c0`. */
export const drawOthers = (
  rng: RngState,
  n: number,
  d: number,
  c0: number
): { readonly value: ReadonlyArray<number>; readonly rng: RngState } => {
  if (d + 1 < n) return withDraws(rng, (draw) => drawDistinct(draw, n, d, [c0]))
  const all: Array<number> = []
  for (let i = 1, r = c0 + 1 === n ? 0 : c0 + 1; i < n; i++, r = r + 1 === n ? 0 : r + 1) all.push(r)
  return { value: all, rng }
}

/** The rare full scan. */
export const fullScan = (
  base: LedgerState,
  c0: number,
  kvOn: boolean,
  tokens: number,
  dated: (r: number) => boolean,
  scoring: Scoring,
  view: ScoreView
): { readonly all: Array<number>; readonly picked: Picked } => {
  const n = base.dpSize
  let all: Array<number> = []
  for (let i = 0, r = c0; i < n; i++, r = r + 1 === n ? 0 : r + 1) if (base.healthy[r]) all.push(r)
  const fits = kvOn && all.length > 0 ? kvFeasible(base, tokens) : undefined
  const datedAll = all.filter((r) => dated(r) && (fits === undefined || fits[r] === true))
  if (datedAll.length > 0 && datedAll.length < all.length) all = datedAll
  const picked = pickBest(
    view,
    all,
    scoring,
    fits === undefined ? undefined : all.map((r) => fits[r] === true)
  )
  return { all, picked }
}

/** The candidates to score. */
export const candidatesOf = (
  base: LedgerState,
  c0: number,
  drawn: ReadonlyArray<number>,
  dated: (r: number) => boolean,
  kvTokens: number | undefined,
  view: ScoreView
): {
  readonly cands: Array<number>
  readonly healthyDrawn: Array<number>
  readonly allowed: Array<boolean> | undefined
  readonly fallback: string | undefined
} => {
  let cands: Array<number> = []
  if (base.healthy[c0]) cands.push(c0)
  for (let i = 0; i < drawn.length; i++) if (base.healthy[drawn[i]!]) cands.push(drawn[i]!)
  const healthyDrawn = cands
  const datedCands = cands.filter(dated)
  if (datedCands.length > 0 && datedCands.length < cands.length) cands = datedCands
  let allowed: Array<boolean> | undefined
  let fallback: string | undefined =
    cands.length === 0
      ? "no drawn rank is healthy"
      : datedCands.length === 0 && base.healthy.some((h, r) => h && dated(r))
        ? "no drawn rank is fresh, and a fresh rank is never busier than a stale or unknown one"
        : undefined
  if (fallback === undefined && kvTokens !== undefined) {
    allowed = new Array<boolean>(cands.length)
    let any = false
    for (let i = 0; i < cands.length; i++) {
      const f = view.freeKvTokens(cands[i]!)
      allowed[i] = f !== undefined && f >= kvTokens
      any ||= allowed[i]!
    }
    if (!any) fallback = "no drawn rank holds the prompt in its free KV"
  }
  return { cands, healthyDrawn, allowed, fallback }
}

/** What `observe` precomputes (`PowerOfChoicesCache`). */
export const cacheOf = (ledger: LedgerState) => ({
  // every known rank counts as fresh here: the floor is the busiest known base (O(ranks) once per observe)
  fm: freshMax(ledger, 0, Number.POSITIVE_INFINITY),
  view: { maxKv: maxKnownKv(ledger), maxUncached: maxWaitingUncached(ledger) },
  maxFree: maxFreeOf(ledger)
})
