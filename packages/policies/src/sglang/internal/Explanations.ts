/**
 * The explanations the SGLang policies attach to a route: tie-break texts, a budget route's
 * explanation, and the FOLLOW_BOOTSTRAP_ROOM result that builds its explanation when read.
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

/**
 * The explanation of a budget route against `budget` (the budget routed from, after any refresh),
 * as plain data: `scores` are the values compared (`totalTokens` under TOTAL_TOKENS while every
 * rank's tokens are known, else `totalRequests`).
 */
export const budgetExplanation = (
  method: LoadBalanceMethod,
  budget: DpBudget,
  refreshed: boolean,
  tieBreak: string = tieBreaks[method]
): Explanation => ({
  scores:
    method === "TOTAL_TOKENS" && budget.tokensUnknown === undefined
      ? budget.totalTokens
      : budget.totalRequests,
  tieBreak,
  refreshed,
  details: { method, budget }
})

/**
 * The result of a FOLLOW_BOOTSTRAP_ROOM route, which leaves the state as it is: the explanation
 * (method, round-robin counter and status of that state) is built when first read, so the route
 * allocates this object only.
 */
export class RoomRouted implements Routed<DpControllerState> {
  declare readonly rank: number
  declare readonly state: DpControllerState
  #explanation: Explanation | undefined

  constructor(rank: number, state: DpControllerState) {
    this.rank = rank
    this.state = state
  }

  get _tag(): "Routed" {
    return "Routed"
  }

  get explanation(): Explanation {
    const s = this.state
    this.#explanation ??= {
      tieBreak: tieBreaks.FOLLOW_BOOTSTRAP_ROOM,
      details: { method: "FOLLOW_BOOTSTRAP_ROOM", roundRobinCounter: s.roundRobinCounter, status: s.status }
    }
    return this.#explanation
  }

  /** The same result as plain data (what `JSON.stringify` writes). */
  toJSON(): Routed<DpControllerState> {
    return { _tag: "Routed", rank: this.rank, state: this.state, explanation: this.explanation }
  }
}
