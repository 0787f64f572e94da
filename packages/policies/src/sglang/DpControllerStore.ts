/**
 * The controller's snapshot store (`DpController.ts`): `publish` (a scheduler's SHM write) and
 * `readAll` (what the refresh reads). Re-exported by `DpController.ts`, so they are called as
 * `DpController.publish` and `DpController.readAll`.
 *
 * Reproduces the SHM reader of `load_snapshot.py` @ 025177e4 (sgl-project/sglang), as specified in
 * `fixtures/reference/sglang/README.md` section 1.
 *
 * @since 0.1.0
 */
import { storeSnapshots } from "../internal/snapshotStore.js"
import type { RankLoad } from "../Policy.js"
import type { DpControllerState } from "./DpControllerTypes.js"
import { next } from "./internal/controllerNext.js"

/**
 * Publish snapshots into the store (`shm[s.dpRank] = s`); the budget is not touched. Snapshots for
 * ranks outside `[0, dpSize)` are ignored. With `now` (seconds; the policies' `observe` passes it),
 * a snapshot without a `timestamp` is stored stamped `now`: it counts as observed at `now`, so the
 * budget applies it once, not at every refresh (loadledger extension: SGLang's snapshots always
 * carry a timestamp).
 *
 * **When to use**: what a scheduler's SHM write does; the policies' `observe`.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const s = DpController.publish(DpController.init("TOTAL_REQUESTS", 2), [
 *   { dpRank: 1, timestamp: 3, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }
 * ])
 * DpController.readAll(s).map((l) => l.dpRank) // => [1]
 * // the budget is unchanged until a refresh
 * s.budget.totalRequests // => [0, 0]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const publish = (
  state: DpControllerState,
  snapshots: ReadonlyArray<RankLoad>,
  now?: number
): DpControllerState => {
  const shm = storeSnapshots(state.shm, snapshots, now)
  return shm === state.shm
    ? state
    : next(state, state.budget, state.roundRobinCounter, state.lastRefreshTimeSeconds, state.status, shm)
}

/**
 * What the reader sees: the published snapshots in ascending `dpRank` (unpublished ranks absent).
 *
 * **When to use**: to see the store as the controller's refresh reads it.
 *
 * @example
 * ```ts
 * import { DpController } from "@loadledger/policies"
 * const s = DpController.publish(DpController.init("TOTAL_REQUESTS", 3), [{ dpRank: 2, numRunningReqs: 1 }], 0)
 * DpController.readAll(s).map((r) => r.dpRank) // => [2]
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const readAll = (state: DpControllerState): ReadonlyArray<RankLoad> =>
  state.shm.filter((s): s is RankLoad => s !== undefined)
