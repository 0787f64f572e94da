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
 * Its routes are in `chargedRoutes.ts`, the ways into it in `chargedLift.ts`, which keep the
 * invariants stated here (which state the cache is at, when it moves, when a fold resets it);
 * `charged.ts` puts the three in one namespace.
 *
 * @internal
 */
import type { Explanation, RankLoad, Routed } from "../../Policy.js"
import type * as DpBudget from "../DpBudget.js"
import { excludedRanks } from "../DpBudget.js"
import type { DpControllerState } from "../DpController.js"
import { budgetExplanation } from "./Explanations.js"
import { type RankTournament, treeOf } from "./RankTournament.js"

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
export const totalsFor = (method: DpControllerState["method"], budget: DpBudget.DpBudget): Totals => {
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

export const budgetOf = (
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
export const foldExplanations = new WeakMap<ChargedState, Explanation>()

/** Route results whose route refreshed the budget first (one in each 20 ms window at most). */
export const refreshedRoutes = new WeakSet<ChargedState>()

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
export const uncharged = (t: Totals, rank: number, tokens: number): [Array<number>, Array<number>] => {
  const requests = t.requests.slice()
  const tok = t.tokens.slice()
  requests[rank]! -= 1
  tok[rank]! -= tokens
  return [requests, tok]
}

/** Per-rank totals of `s` from its base and charges (fresh arrays). */
export const rebuild = (s: ChargedState): [Array<number>, Array<number>] => {
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
