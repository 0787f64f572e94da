/**
 * The state the SGLang `TOTAL_REQUESTS` / `TOTAL_TOKENS` policies thread from route to route: a
 * persistent `DpControllerState` whose budget is a base budget plus the speculative charges routed
 * since, so that a route records one charge (one small object) instead of copying per-rank arrays.
 *
 * Why it is not the plain reference (`DpController.dispatchRequest`, which copies the per-rank
 * arrays on every charge), measured on the built package with `pnpm bench:compare` (table in
 * CONTRIBUTING.md, "Performance"): the plain state misses the <=3x-of-floor target at 8 ranks
 * (TOTAL_REQUESTS 49 ns vs 23 ns here, TOTAL_TOKENS 309 ns vs 36 ns) and costs 20x to 30x this
 * one at 1024 ranks (TOTAL_REQUESTS 2.8 us vs 93 ns, TOTAL_TOKENS 3.1 us vs 141 ns, the latter
 * missing <=2x). Each remaining trick carries its measured gain on the built code next to it.
 *
 * `RoutedState` is a plain subclass (`extends`, `instanceof`): the prototype chaining and brand
 * that replaced them for tsx's `keepNames` showed no gain in the build (A/B of two builds,
 * TOTAL_REQUESTS 1.00x to 1.07x at 8, 64 and 1024 ranks, within noise; TOTAL_TOKENS 0.96x to
 * 1.19x, noisy), so they went. Under tsx, which keeps class names, a TOTAL_* route then costs
 * about 0.4 to 5 us instead of 40 to 140 ns: tests, examples and `pnpm loadledger` from source pay
 * that, users of the build do not.
 *
 * Over 300 lines: one concept (the persistent state and its one shared cache), whose invariants
 * (which state the cache is at, when it moves, when a fold resets it) hold across every function
 * here; split, no file could be checked against them alone.
 *
 * @internal
 */
import type { Explanation, RankLoad, Routed } from "../../Policy.js"
import { isTokenCount } from "../../RequestChecks.js"
import type * as DpBudget from "../DpBudget.js"
import { excludedRanks } from "../DpBudget.js"
import type { DpControllerState } from "../DpController.js"
import { budgetExplanation } from "./Explanations.js"
import { chargeTotals, pickOf, type RankTournament, treeOf } from "./RankTournament.js"

/**
 * The per-rank totals of one state (`at`): mutable, shared by the states of one base, and valid
 * only while `at` is the state asking (any other state rebuilds them from its base and charges).
 * The totals and their pick are a `RankTournament` (see there).
 *
 * @internal
 */
export interface Totals extends RankTournament {
  at: ChargedState | undefined
}

/** Fresh totals for `budget` and `method` (copies of its arrays, a new tournament). */
const totalsFor = (method: DpControllerState["method"], budget: DpBudget.DpBudget): Totals => {
  const requests = budget.totalRequests.slice()
  const tokens = budget.totalTokens.slice()
  const byTokens = method === "TOTAL_TOKENS" && budget.tokensUnknown === undefined
  const excluded = excludedRanks(budget, method)
  return {
    requests,
    tokens,
    tree: treeOf(requests, tokens, byTokens, excluded),
    byTokens,
    excluded,
    at: undefined
  }
}

/**
 * Budgets already computed by `ChargedState.budget` (a memo: each state's budget never changes).
 *
 * Side tables (this one, `foldExplanations`, `refreshedRoutes`) rather than `#private` fields:
 * they keep a route's object at its five fields and out of structural equality. Measured on the
 * built package (A/B, TOTAL_REQUESTS): three `#private` fields instead make a route 2.05x slower at
 * 8 ranks (20 -> 42 ns) and 1.34x at 64 and 1024 ranks; the tables are touched only on a budget
 * read, a refresh or a fold, never on the fast path.
 */
const budgets = new WeakMap<ChargedState, DpBudget.DpBudget>()

const budgetOf = (
  base: DpBudget.DpBudget,
  requests: Array<number>,
  tokens: Array<number>
): DpBudget.DpBudget =>
  base.tokensUnknown === undefined && base.requestsUnknown === undefined
    ? { totalRequests: requests, totalTokens: tokens, lastTimestamp: base.lastTimestamp }
    : {
        totalRequests: requests,
        totalTokens: tokens,
        lastTimestamp: base.lastTimestamp,
        ...(base.requestsUnknown === undefined ? {} : { requestsUnknown: base.requestsUnknown }),
        ...(base.tokensUnknown === undefined ? {} : { tokensUnknown: base.tokensUnknown })
      }

/**
 * What the states of one base share: the controller fields, the budget at the last refresh or
 * fold (`baseBudget`), the fold bound and the totals cache. A new frame comes with each refresh,
 * fold, `observe` and `setStatus` (the last two keep the cache).
 *
 * @internal
 */
export class Frame {
  declare readonly method: DpControllerState["method"]
  declare readonly dpSize: number
  declare readonly roundRobinCounter: number
  declare readonly lastRefreshTimeSeconds: number
  declare readonly status: ReadonlyArray<boolean>
  declare readonly shm: ReadonlyArray<RankLoad | undefined>
  declare readonly baseBudget: DpBudget.DpBudget
  /** Charges kept before a route folds them into a new base: bounds memory and every rebuild. */
  declare readonly maxCharges: number
  readonly #totals: Totals

  constructor(
    s: Pick<DpControllerState, "method" | "dpSize" | "roundRobinCounter">,
    lastRefreshTimeSeconds: number,
    status: ReadonlyArray<boolean>,
    shm: ReadonlyArray<RankLoad | undefined>,
    baseBudget: DpBudget.DpBudget,
    totals: Totals
  ) {
    this.method = s.method
    this.dpSize = s.dpSize
    this.roundRobinCounter = s.roundRobinCounter
    this.lastRefreshTimeSeconds = lastRefreshTimeSeconds
    this.status = status
    this.shm = shm
    this.baseBudget = baseBudget
    this.maxCharges = Math.max(1024, 2 * s.dpSize)
    this.#totals = totals
  }

  /**
   * The totals cache of this base: private (a getter, not an own field), so structural equality
   * never compares it and a clone has none. Not `Object.defineProperty`: that makes every frame
   * (one per `observe` / `setStatus`) about 100 ns slower to build.
   */
  get totals(): Totals {
    return this.#totals
  }
}

/**
 * A `DpControllerState` whose `budget` is `frame.baseBudget` plus the speculative charges of the
 * routes since: this state's own charge (`+1` request and `+chargedTokens` tokens to `chargedRank`)
 * on top of `previous`'s budget, `charges` of them in all. A base (after a refresh or a fold, or
 * from `init`) has `charges` 0 and no `previous`. The controller fields are read from the frame.
 *
 * Every instance is immutable as observed: its fields never change and its `budget` is always the
 * same value. The only mutable part is the totals cache shared by the states of one base: a route
 * from the state it is at updates it in place and moves it to the new state (O(1)); routing from
 * any other state rebuilds it first (O(ranks + charges)). After `frame.maxCharges` charges a route
 * folds them into a new base (O(ranks)), which bounds memory and rebuilds.
 *
 * Own enumerable fields are the whole value, so structural equality (`util.isDeepStrictEqual`,
 * vitest `toEqual`) compares states by content and history (the charges since the base): a state
 * and an `observe` / `setStatus` copy of it with the same content are not equal, nor is a policy
 * state equal to the plain `DpController` state. `JSON.stringify` writes the plain `DpControllerState`.
 *
 * @internal
 */
export class ChargedState implements DpControllerState {
  declare readonly frame: Frame
  /** Charges since `frame.baseBudget`, this state's own included. */
  declare readonly charges: number
  /** The rank this state's route charged (also kept by a route that folds). */
  declare readonly chargedRank: number
  /** The tokens this state's route charged (also kept by a route that folds). */
  declare readonly chargedTokens: number
  /** The state charged from (`undefined` at a base). */
  declare readonly previous: ChargedState | undefined

  constructor(
    frame: Frame,
    charges: number,
    chargedRank: number,
    chargedTokens: number,
    previous: ChargedState | undefined
  ) {
    this.frame = frame
    this.charges = charges
    this.chargedRank = chargedRank
    this.chargedTokens = chargedTokens
    this.previous = previous
  }

  get method(): DpControllerState["method"] {
    return this.frame.method
  }
  get dpSize(): number {
    return this.frame.dpSize
  }
  get roundRobinCounter(): number {
    return this.frame.roundRobinCounter
  }
  get lastRefreshTimeSeconds(): number {
    return this.frame.lastRefreshTimeSeconds
  }
  get status(): ReadonlyArray<boolean> {
    return this.frame.status
  }
  get shm(): ReadonlyArray<RankLoad | undefined> {
    return this.frame.shm
  }

  /** `frame.baseBudget` plus every charge, as plain arrays (computed on first read). */
  get budget(): DpBudget.DpBudget {
    return budgetOfState(this, true)
  }

  /** The plain `DpControllerState` (what `JSON.stringify` writes). */
  toJSON(): object {
    return plainOf(this)
  }
}

/**
 * The budget of `s`: its base budget, a copy of the totals cache when it is at `s` or one route
 * past it, else the base plus the charges walked back. `memo` keeps it for the next read.
 */
const budgetOfState = (s: ChargedState, memo: boolean): DpBudget.DpBudget => {
  let b = budgets.get(s)
  if (b !== undefined) return b
  const base = s.frame.baseBudget
  const t = s.frame.totals
  const next = t.at
  b =
    s.charges === 0
      ? base
      : next === s
        ? budgetOf(base, t.requests.slice(), t.tokens.slice())
        : next !== undefined && next.previous === s && next.charges > 0
          ? budgetOf(base, ...uncharged(t, next.chargedRank, next.chargedTokens))
          : budgetOf(base, ...rebuild(s))
  if (memo) budgets.set(s, b)
  return b
}

/** The explanations of the routes that folded (a route result with no charge). */
const foldExplanations = new WeakMap<ChargedState, Explanation>()

/** Route results whose route refreshed the budget first (one in each 20 ms window at most). */
const refreshedRoutes = new WeakSet<ChargedState>()

/** `s` as a plain `DpControllerState` (fresh object, the budget computed if needed). */
const plainOf = (s: ChargedState): DpControllerState => ({
  method: s.method,
  dpSize: s.dpSize,
  budget: s.budget,
  roundRobinCounter: s.roundRobinCounter,
  lastRefreshTimeSeconds: s.lastRefreshTimeSeconds,
  status: s.status,
  shm: s.shm
})

/** Copies of the totals of `t` without one charge of `rank` (`+1` request, `+tokens` tokens). */
const uncharged = (t: Totals, rank: number, tokens: number): [Array<number>, Array<number>] => {
  const requests = t.requests.slice()
  const tok = t.tokens.slice()
  requests[rank]! -= 1
  tok[rank]! -= tokens
  return [requests, tok]
}

/** Per-rank totals of `s` from its base and charges (fresh arrays). */
const rebuild = (s: ChargedState): [Array<number>, Array<number>] => {
  const requests = s.frame.baseBudget.totalRequests.slice()
  const tokens = s.frame.baseBudget.totalTokens.slice()
  for (let c: ChargedState | undefined = s; c !== undefined && c.charges > 0; c = c.previous) {
    requests[c.chargedRank]! += 1
    tokens[c.chargedRank]! += c.chargedTokens
  }
  return [requests, tokens]
}

/**
 * The state a budget route returns, which is also the route's `Routed` result (`r.state === r`),
 * so that the fast path allocates one object per route: `rank` is the charged rank and
 * `explanation` is built on each read from `previous`, the state routed from (a route that
 * folds its charges stores its explanation as plain data instead).
 *
 * It inherits the budget and the controller fields from `ChargedState`.
 *
 * @internal
 */
export class RoutedState extends ChargedState implements Routed<DpControllerState> {
  get _tag(): "Routed" {
    return "Routed"
  }
  get rank(): number {
    return this.chargedRank
  }
  get state(): DpControllerState {
    return this
  }
  /** The route result as plain data, as other policies' results serialize (`state` plain too). */
  override toJSON(): object {
    return { _tag: "Routed", rank: this.rank, state: plainOf(this), explanation: this.explanation }
  }

  /** Plain data, built on each read from the state routed from (kept by a route that folded). */
  get explanation(): Explanation {
    if (this.charges === 0) return foldExplanations.get(this)!
    const before = this.previous!
    return budgetExplanation(before.method, budgetOfState(before, false), refreshedRoutes.has(this))
  }
}

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
