/**
 * The explanations the SGLang policies attach to a route: tie-break texts and the lazily read
 * explanation of a budget route.
 *
 * @internal
 */
import type { Explanation, Routed } from "../../Policy.js"
import type { DpBudget, LoadBalanceMethod } from "../DpBudget.js"
import type { DpControllerState } from "../DpController.js"

/** What decides between equal candidates, per method. */
export const tieBreaks: Readonly<Record<LoadBalanceMethod, string>> = {
  ROUND_ROBIN: "next healthy slot after the round-robin counter",
  FOLLOW_BOOTSTRAP_ROOM: "bootstrapRoom floor-modulo dpSize",
  TOTAL_REQUESTS: "lowest index among minimal totalRequests",
  TOTAL_TOKENS: "lowest index among minimal (totalTokens, totalRequests)"
}

/** The tie-break of a request that names its rank. */
export const routedTieBreak = "routedDpRank bypasses the budget"

/** The explanation of a budget route against `budget`, as plain data. */
export const budgetExplanation = (
  method: LoadBalanceMethod,
  budget: DpBudget,
  refreshed: boolean
): Explanation => ({
  scores:
    method === "TOTAL_TOKENS" && budget.tokensUnknown === undefined
      ? budget.totalTokens
      : budget.totalRequests,
  tieBreak: tieBreaks[method],
  refreshed,
  details: { method, budget }
})

/**
 * The explanation of a `TOTAL_REQUESTS` / `TOTAL_TOKENS` route: `scores` and `details.budget` are
 * read from the state routed from (which never changes) when first asked for, so a route copies no
 * per-rank array for them; `JSON.stringify` writes them all.
 */
export class BudgetExplanation implements Explanation {
  readonly tieBreak: string
  readonly refreshed: boolean
  readonly #before: DpControllerState

  constructor(before: DpControllerState, refreshed: boolean, tieBreak: string) {
    this.tieBreak = tieBreak
    this.refreshed = refreshed
    this.#before = before
  }

  /** The values compared: `totalTokens` under TOTAL_TOKENS while every rank's tokens are known, else `totalRequests`. */
  get scores(): ReadonlyArray<number> {
    return this.toJSON().scores!
  }

  /** The method and the whole budget routed against. */
  get details(): Readonly<Record<string, unknown>> {
    return this.toJSON().details!
  }

  /** The same explanation as plain data (what `JSON.stringify` writes). */
  toJSON(): Explanation {
    return budgetExplanation(this.#before.method, this.#before.budget, this.refreshed)
  }
}

/**
 * The result of a FOLLOW_BOOTSTRAP_ROOM route, which leaves the state as it is: the explanation
 * (method, round-robin counter and status of that state) is built when first read, so the route
 * allocates this object only.
 */
export class RoomRouted implements Routed<DpControllerState> {
  declare readonly rank: number
  declare readonly state: DpControllerState

  constructor(rank: number, state: DpControllerState) {
    this.rank = rank
    this.state = state
  }

  get _tag(): "Routed" {
    return "Routed"
  }

  get explanation(): Explanation {
    const s = this.state
    return {
      tieBreak: tieBreaks.FOLLOW_BOOTSTRAP_ROOM,
      details: { method: "FOLLOW_BOOTSTRAP_ROOM", roundRobinCounter: s.roundRobinCounter, status: s.status }
    }
  }

  /** The same result as plain data (what `JSON.stringify` writes). */
  toJSON(): Routed<DpControllerState> {
    return { _tag: "Routed", rank: this.rank, state: this.state, explanation: this.explanation }
  }
}
