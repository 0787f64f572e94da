/**
 * The SGLang controller's published snapshot store, shared by `DpController.publish` and the
 * policies' persistent state.
 *
 * @internal
 */
import type { RankLoad } from "../Policy.js"

/**
 * `shm` with each snapshot written to its `dpRank` slot (later ones win), copy-on-write; snapshots
 * for a rank outside `[0, shm.length)` are ignored. `shm` itself when nothing was written. With
 * `now`, a snapshot without a `timestamp` is stored stamped `now` (observed at `now`).
 *
 * @internal
 */
export const storeSnapshots = (
  shm: ReadonlyArray<RankLoad | undefined>,
  snapshots: ReadonlyArray<RankLoad>,
  now?: number
): ReadonlyArray<RankLoad | undefined> => {
  let out: Array<RankLoad | undefined> | undefined
  for (const s of snapshots) {
    if (!Number.isInteger(s.dpRank) || s.dpRank < 0 || s.dpRank >= shm.length) continue
    out ??= shm.slice()
    out[s.dpRank] = s.timestamp === undefined && now !== undefined ? { ...s, timestamp: now } : s
  }
  return out ?? shm
}
