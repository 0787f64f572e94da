/**
 * The controller state's copy helper (`DpController.ts`, `DpControllerSchedule.ts`,
 * `DpControllerStore.ts`).
 */
import type { RankLoad } from "../../Policy.js"
import type { DpBudget } from "../DpBudgetTypes.js"
import type { DpControllerState } from "../DpControllerTypes.js"

/**
 * A copy of `s` with some fields replaced, as an explicit literal: object spread is an order of
 * magnitude slower on Node 20 in this hot path (measured with `pnpm bench`).
 */
export const next = (
  s: DpControllerState,
  budget: DpBudget,
  roundRobinCounter: number,
  lastRefreshTimeSeconds: number,
  status: ReadonlyArray<boolean>,
  shm: ReadonlyArray<RankLoad | undefined>
): DpControllerState => ({
  method: s.method,
  dpSize: s.dpSize,
  budget,
  roundRobinCounter,
  lastRefreshTimeSeconds,
  status,
  shm
})
