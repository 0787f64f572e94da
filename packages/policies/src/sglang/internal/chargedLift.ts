/**
 * Into and out of the persistent SGLang budget state (`ChargedState.ts`): `isCharged`, `frameOf`, `chargedOf`
 * (a base state), `stateProblem` (why a value is no `DpControllerState`), `lift`, `withStore` and
 * `totalsOf`, which moves the one shared totals cache to a state. The invariants are
 * `ChargedState.ts`'s (its header).
 *
 * @internal
 */
import type { RankLoad } from "../../Policy.js"
import type * as DpBudget from "../DpBudget.js"
import type { DpControllerState } from "../DpController.js"
import { ChargedState, Frame, rebuild, type Totals, totalsFor } from "./ChargedState.js"
import { chargeTotals, pickOf, treeOf } from "./RankTournament.js"

/**
 * Whether `s` is a `ChargedState` (a `RoutedState` included; a spread or clone of one is not).
 *
 * @internal
 */
export const isCharged = (s: DpControllerState): s is ChargedState => s instanceof ChargedState

/**
 * The frame of `s` when `s` is a `ChargedState` (a plain `DpControllerState` has none): the check
 * of the routes' fast path, cheaper than {@link isCharged}.
 *
 * @internal
 */
export const frameOf = (s: DpControllerState): Frame | undefined => (s as { readonly frame?: Frame }).frame

/**
 * A base state: `s` with budget `budget` (default `s.budget`), no charges, a fresh totals cache.
 *
 * @internal
 */
export const chargedOf = (
  s: DpControllerState,
  budget: DpBudget.DpBudget = s.budget,
  lastRefreshTimeSeconds = s.lastRefreshTimeSeconds
): ChargedState => {
  const t = totalsFor(s.method, budget)
  const out = new ChargedState(
    new Frame(s, lastRefreshTimeSeconds, s.status, s.shm, budget, t),
    0,
    0,
    0,
    undefined
  )
  t.at = out
  return out
}

const isArrayOf = (x: unknown, n: number): boolean => Array.isArray(x) && x.length === n

/**
 * The first field of `s` that makes it no `DpControllerState` a policy can convert, as a message;
 * `undefined` for a well-formed one. A spread or `structuredClone` of a policy state is such a
 * case: it keeps the own fields but not the controller fields read through the prototype.
 *
 * @internal
 */
export const stateProblem = (s: DpControllerState): string | undefined => {
  const n = s.dpSize
  if (!(Number.isInteger(n) && n >= 0)) return `state.dpSize must be a rank count, got ${n}`
  const b = s.budget as Partial<DpBudget.DpBudget> | undefined
  if (typeof b !== "object" || b === null)
    return "state.budget is missing (a spread or clone of a policy state?)"
  for (const k of ["totalRequests", "totalTokens", "lastTimestamp"] as const)
    if (!isArrayOf(b[k], n)) return `state.budget.${k} must have dpSize (${n}) entries`
  if (!isArrayOf(s.status, n)) return `state.status must have dpSize (${n}) entries`
  if (!isArrayOf(s.shm, n)) return `state.shm must have dpSize (${n}) entries`
  if (typeof s.lastRefreshTimeSeconds !== "number") return "state.lastRefreshTimeSeconds must be a number"
  return undefined
}

/**
 * `s` unless it is a plain `DpControllerState`, which is converted (O(ranks)); check it with
 * {@link stateProblem} first.
 *
 * @internal
 */
export const lift = (s: DpControllerState): ChargedState => (isCharged(s) ? s : chargedOf(s))

/**
 * `s` with another status and snapshot store (same budget); the totals cache follows it.
 *
 * @internal
 */
export const withStore = (
  s: ChargedState,
  status: ReadonlyArray<boolean>,
  shm: ReadonlyArray<RankLoad | undefined>
): ChargedState => {
  const f = s.frame
  const t = f.totals
  const out = new ChargedState(
    new Frame(f, f.lastRefreshTimeSeconds, status, shm, f.baseBudget, t),
    s.charges,
    s.chargedRank,
    s.chargedTokens,
    s.previous
  )
  if (t.at === s) t.at = out
  return out
}

/**
 * The per-rank totals of `s` (see {@link pickOf}), to charge through {@link routeFrom}: the
 * shared cache, moved to `s` first when it is at another state of the base. Both states' charges
 * are walked back to where their histories meet (at the base at the latest): the cache's own are
 * taken back and those of `s` applied, O(charges walked x log ranks). Routing twice from one state
 * (a retry) takes back one charge. Mutated only by `routeFrom`.
 *
 * @internal
 */
export const totalsOf = (s: ChargedState): Totals => {
  const t = s.frame.totals
  let a = t.at
  if (a === s) return t
  if (a === undefined) {
    // a fold moved the cache to a later base: start again from this base
    const [requests, tokens] = rebuild(s)
    t.requests = requests
    t.tokens = tokens
    t.tree = treeOf(requests, tokens, t.byTokens, t.excluded)
    t.at = s
    return t
  }
  const redo: Array<ChargedState> = []
  let b: ChargedState = s
  while (a.charges > b.charges) {
    chargeTotals(t, a.chargedRank, a.chargedTokens, -1)
    a = a.previous!
  }
  while (b.charges > a.charges) {
    redo.push(b)
    b = b.previous!
  }
  while (!sameBudget(a, b)) {
    chargeTotals(t, a.chargedRank, a.chargedTokens, -1)
    redo.push(b)
    a = a.previous!
    b = b.previous!
  }
  for (const c of redo) chargeTotals(t, c.chargedRank, c.chargedTokens)
  t.at = s
  return t
}

/**
 * Whether two states of one base (one totals cache) have the same budget: the same object, both
 * at the base, or the same charge on the same previous state (a copy made by `observe` or
 * `setStatus`).
 */
const sameBudget = (a: ChargedState, b: ChargedState): boolean =>
  a === b ||
  (a.charges === b.charges &&
    (a.charges === 0 ||
      (a.previous === b.previous && a.chargedRank === b.chargedRank && a.chargedTokens === b.chargedTokens)))
