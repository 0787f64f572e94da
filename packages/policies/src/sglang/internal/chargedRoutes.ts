/**
 * The routes of the persistent SGLang budget state (`ChargedState.ts`): `routeFrom` (one charge),
 * the fold of every charge into a new base, and the `TOTAL_REQUESTS` / `TOTAL_TOKENS` fast paths,
 * which move the one shared totals cache along. The invariants are `ChargedState.ts`'s (its header).
 *
 * @internal
 */
import { isTokenCount } from "../../RequestChecks.js"
import type { DpControllerState } from "../DpController.js"
import {
  budgetOf,
  type ChargedState,
  Frame,
  foldExplanations,
  RoutedState,
  refreshedRoutes,
  type Totals,
  uncharged
} from "./ChargedState.js"
import { frameOf, totalsOf } from "./chargedLift.js"
import { budgetExplanation } from "./Explanations.js"
import { chargeTotals } from "./RankTournament.js"

/**
 * Route to `rank` from `s`: the state after charging `rank` `+1` request and `+tokens` tokens,
 * which is also the route's `Routed` result; `refreshed` says whether the route refreshed the
 * budget to make `s`. `t` is {@link totalsOf} `s`, updated in place; the cache moves to the new state.
 *
 * @internal
 */
export const routeFrom = (
  s: ChargedState,
  t: Totals,
  rank: number,
  tokens: number,
  refreshed: boolean
): RoutedState => {
  chargeTotals(t, rank, tokens)
  const f = s.frame
  const charges = s.charges + 1
  if (charges > f.maxCharges) return fold(s, t, rank, tokens, refreshed)
  const out = new RoutedState(f, charges, rank, tokens, s)
  t.at = out
  if (refreshed) refreshedRoutes.add(out)
  return out
}

/** The route from `s` (charged in `t` already) that folds every charge into a new base. */
const fold = (s: ChargedState, t: Totals, rank: number, tokens: number, refreshed: boolean): RoutedState => {
  const f = s.frame
  const budget = budgetOf(f.baseBudget, t.requests.slice(), t.tokens.slice())
  const moved: Totals = {
    requests: t.requests,
    tokens: t.tokens,
    tree: t.tree,
    byTokens: t.byTokens,
    excluded: t.excluded,
    at: undefined
  }
  t.at = undefined // the states of the old base rebuild their totals on use
  // the explanation as data now: a lazy one would keep `s`, and through it every earlier base, alive
  const before = budgetOf(f.baseBudget, ...uncharged(moved, rank, tokens))
  const out = new RoutedState(
    new Frame(f, f.lastRefreshTimeSeconds, f.status, f.shm, budget, moved),
    0,
    rank,
    tokens,
    undefined
  )
  moved.at = out
  foldExplanations.set(out, budgetExplanation(f.method, before, refreshed))
  return out
}

/**
 * The totals cache of `state` when a route from it can take the fast path: `state` is a
 * `ChargedState` the cache is at, `now` is finite and inside the refresh window, the request names
 * no rank, there are 1 to 16 ranks (no tournament) and the charge does not fold. `undefined`
 * otherwise: the caller then takes the general path (lift, refresh, rebuild, fold, tournament,
 * errors), which gives the same result.
 */
const fastTotals = (
  state: DpControllerState,
  routedDpRank: number | undefined,
  now: number,
  refreshIntervalSeconds: number
): Totals | undefined => {
  const f = frameOf(state)
  if (f === undefined || routedDpRank !== undefined || !Number.isFinite(now)) return undefined
  if (!(now - f.lastRefreshTimeSeconds < refreshIntervalSeconds)) return undefined
  // a clone of a state has a `frame` without the (non-enumerable) cache: not the fast path either
  const t = f.totals as Totals | undefined
  if (t === undefined || t.at !== state) return undefined
  return t.requests.length === 0 ||
    t.tree !== undefined ||
    t.excluded !== undefined ||
    (state as ChargedState).charges >= f.maxCharges
    ? undefined
    : t
}

/** The route from the state `t` is at to `rank` (charged in `t` already); the cache moves along. */
const advance = (t: Totals, rank: number, tokens: number): RoutedState => {
  const s = t.at!
  const out = new RoutedState(s.frame, s.charges + 1, rank, tokens, s)
  t.at = out
  return out
}

/**
 * TOTAL_REQUESTS on its fast path (see {@link fastTotals}), in small functions V8 inlines into the
 * caller (the scan is written out here, not called, for that): the lowest index among the minimal
 * `totalRequests`, charged `+1`. `undefined` off the fast path.
 *
 * @internal
 */
export const routeRequestsFast = (
  state: DpControllerState,
  routedDpRank: number | undefined,
  now: number,
  refreshIntervalSeconds: number
): RoutedState | undefined => {
  const t = fastTotals(state, routedDpRank, now, refreshIntervalSeconds)
  if (t === undefined) return undefined
  const req = t.requests
  const n = req.length
  let best = 0
  let bestReq = req[0]!
  for (let i = 1; i < n; i++) {
    const v = req[i]!
    if (v < bestReq) {
      bestReq = v
      best = i
    }
  }
  req[best] = bestReq + 1
  return advance(t, best, 0)
}

/**
 * TOTAL_TOKENS on its fast path (see {@link fastTotals}; also every rank's tokens known and
 * `tokens` a count): the lowest index among the lexicographically minimal
 * `(totalTokens, totalRequests)`, charged `+1` request and `+tokens`. `undefined` off the fast path.
 *
 * @internal
 */
export const routeTokensFast = (
  state: DpControllerState,
  routedDpRank: number | undefined,
  tokens: number,
  now: number,
  refreshIntervalSeconds: number
): RoutedState | undefined => {
  const t = fastTotals(state, routedDpRank, now, refreshIntervalSeconds)
  if (t === undefined || !t.byTokens || !isTokenCount(tokens)) return undefined
  const req = t.requests
  const tok = t.tokens
  const n = tok.length
  let best = 0
  let bestTok = tok[0]!
  let bestReq = req[0]!
  for (let i = 1; i < n; i++) {
    const x = tok[i]!
    if (x < bestTok || (x === bestTok && req[i]! < bestReq)) {
      bestTok = x
      bestReq = req[i]!
      best = i
    }
  }
  req[best] = bestReq + 1
  tok[best] = bestTok + tokens
  return advance(t, best, tokens)
}
