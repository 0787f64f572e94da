/**
 * The vLLM balancer policy's options beyond upstream, each off by default: the KV-saturation guard
 * (which ranks to skip) and the snapshot-age explanation (`staleAfterSeconds`).
 *
 * @internal
 */
import { freeKvTokensFromUsage } from "../../own/internal/FreeKv.js"
import type { RankLoad } from "../../Policy.js"
import type { VllmEngineRow } from "../VllmLb.js"

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

/**
 * The KV guard's size check: the ranks whose known free KV tokens (`freeKv[i]`, from the row's
 * `kvAvailableTokens` + `kvEvictableTokens`, else its capacity minus used tokens, else its
 * capacity x (1 - `kvCacheUsage`); `undefined` when the row carries no capacity) cannot hold the
 * prompt's uncached tokens, when some healthy rank's known free KV can; `undefined` when it skips
 * none (no rank reported a capacity, none is too small, or none is known to fit). The router sees
 * no engine's prefix cache, so a prompt's uncached tokens are its `inputLength` (a rank that caches
 * part of it may be skipped while a rank known to fit it whole exists; never the other way round).
 */
export const kvTooSmall = (
  freeKv: ReadonlyArray<number | undefined> | undefined,
  healthy: ReadonlyArray<boolean>,
  uncachedTokens: number
): ReadonlyArray<number> | undefined => {
  if (freeKv === undefined) return undefined
  let fits = false
  for (let i = 0; i < freeKv.length && !fits; i++) {
    const f = freeKv[i]
    fits = healthy[i] === true && f !== undefined && f >= uncachedTokens
  }
  if (!fits) return undefined
  const small: Array<number> = []
  for (let i = 0; i < freeKv.length; i++) {
    const f = freeKv[i]
    if (f !== undefined && f < uncachedTokens) small.push(i)
  }
  return small.length > 0 ? small : undefined
}

/** `a` and `b` merged in rank order without repeats; `undefined` when both are. */
export const unionRanks = (
  a: ReadonlyArray<number> | undefined,
  b: ReadonlyArray<number> | undefined
): ReadonlyArray<number> | undefined =>
  a === undefined ? b : b === undefined ? a : [...new Set([...a, ...b])].sort((x, y) => x - y)

/** Each row's free KV tokens folded into `prev` (rows outside `0..n-1` ignored); `undefined` while none is known. */
export const observeFreeKv = (
  prev: ReadonlyArray<number | undefined> | undefined,
  loads: ReadonlyArray<RankLoad>,
  n: number
): ReadonlyArray<number | undefined> | undefined => {
  let out: Array<number | undefined> | undefined
  for (const l of loads) {
    const r = l.dpRank
    if (!Number.isInteger(r) || r < 0 || r >= n) continue
    const f = freeKvTokensFromUsage(l, undefined)
    if (f === undefined && (prev === undefined || prev[r] === undefined)) continue
    out ??= prev === undefined ? new Array<number | undefined>(n).fill(undefined) : prev.slice()
    out[r] = f
  }
  return out ?? prev
}
