/**
 * The vLLM balancer policy's options beyond upstream, each off by default: the KV-saturation guard
 * (which ranks to skip) and the snapshot-age explanation (`staleAfterSeconds`).
 *
 * @internal
 */
import type { VllmEngineRow } from "../VllmLbTypes.js"

/**
 * The ranks the KV-saturation guard skips: those at `kvCacheUsage >= saturatedAt` with waiting
 * requests, when some healthy rank has `kvCacheUsage < roomBelow`; `undefined` when the guard
 * skips none (no room anywhere, or no saturated rank).
 */
export const kvGuard = (
  rows: ReadonlyArray<VllmEngineRow>,
  healthy: ReadonlyArray<boolean>,
  saturatedAt: number,
  roomBelow: number
): ReadonlyArray<number> | undefined => {
  let room = false
  for (let i = 0; i < rows.length && !room; i++) {
    const kv = rows[i]![2]
    room = healthy[i] === true && kv !== undefined && kv < roomBelow
  }
  if (!room) return undefined
  const guarded: Array<number> = []
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    const kv = row[2]
    if (kv !== undefined && kv >= saturatedAt && row[0] > 0) guarded.push(i)
  }
  return guarded.length > 0 ? guarded : undefined
}

/** The scan's skip mask: the unhealthy ranks and the `guarded` ones. */
export const skipping = (healthy: ReadonlyArray<boolean>, guarded: ReadonlyArray<number>): Array<boolean> => {
  const skip = new Array<boolean>(healthy.length)
  for (let i = 0; i < healthy.length; i++) skip[i] = !healthy[i]
  for (let i = 0; i < guarded.length; i++) skip[guarded[i]!] = true
  return skip
}

/**
 * Each rank's snapshot age at `now` (`undefined` when never observed), the ranks never observed,
 * the observed ranks older than `staleAfter` seconds, and whether every observed rank is stale
 * (`coordinatorFrozen`, false when none was observed).
 */
export const snapshotAges = (
  snapshotAt: ReadonlyArray<number | undefined>,
  now: number,
  staleAfter: number
): {
  readonly ages: ReadonlyArray<number | undefined>
  readonly never: ReadonlyArray<number>
  readonly stale: Array<number>
  readonly coordinatorFrozen: boolean
} => {
  const ages = new Array<number | undefined>(snapshotAt.length)
  const never: Array<number> = []
  const stale: Array<number> = []
  for (let i = 0; i < snapshotAt.length; i++) {
    const t = snapshotAt[i]
    const age = t === undefined ? undefined : now - t
    ages[i] = age
    if (age === undefined) never.push(i)
    else if (age > staleAfter) stale.push(i)
  }
  return {
    ages,
    never,
    stale,
    coordinatorFrozen: ages.length > never.length && stale.length === ages.length - never.length
  }
}
