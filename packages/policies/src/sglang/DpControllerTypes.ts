/**
 * The shapes of SGLang's DataParallelController (`DpController.ts`): its state and the outcomes of
 * a refresh, a schedule, one request and a batch. A leaf module below `DpController.ts`,
 * `DpControllerSchedule.ts`, `DpControllerStore.ts` and the policies; `DpController.ts` re-exports
 * them, so they stay `DpController.DpControllerState` and so on.
 *
 * @since 0.1.0
 */
import type { PolicyError, RankLoad } from "../Policy.js"
import type * as DpBudget from "./DpBudgetTypes.js"

/**
 * The controller's state: the method, the {@link DpBudget.DpBudget}, the round-robin counter, the
 * time of the last refresh (seconds, starts at 0.0), per-rank health (`true` = healthy) and the
 * snapshot store `shm` (index = dp rank; `undefined` for a rank that never published).
 *
 * @category models
 * @since 0.1.0
 */
export interface DpControllerState {
  readonly method: DpBudget.LoadBalanceMethod
  readonly dpSize: number
  readonly budget: DpBudget.DpBudget
  readonly roundRobinCounter: number
  readonly lastRefreshTimeSeconds: number
  readonly status: ReadonlyArray<boolean>
  readonly shm: ReadonlyArray<RankLoad | undefined>
}

/**
 * The outcome of a refresh attempt.
 *
 * @category models
 * @since 0.1.0
 */
export interface Refreshed {
  readonly refreshed: boolean
  readonly state: DpControllerState
}

/**
 * A scheduled request: the rank and the state after it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Scheduled {
  readonly rank: number
  readonly state: DpControllerState
}

/**
 * The outcome of {@link dispatchRequest}: `refreshed` is absent for methods that do not refresh;
 * `state` includes the refresh even when scheduling failed (upstream consumes the window anyway).
 *
 * @category models
 * @since 0.1.0
 */
export interface RequestOutcome {
  readonly refreshed: boolean | undefined
  readonly rank: number | undefined
  readonly error?: PolicyError | undefined
  readonly state: DpControllerState
}

/**
 * The outcome of {@link dispatchBatch}: the ranks dispatched before any error.
 *
 * @category models
 * @since 0.1.0
 */
export interface BatchOutcome {
  readonly refreshed: boolean | undefined
  readonly ranks: ReadonlyArray<number>
  readonly error?: PolicyError | undefined
  readonly state: DpControllerState
}
