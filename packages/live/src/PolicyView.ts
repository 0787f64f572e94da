/**
 * The view of the ledger a policy decides in: only the ranks it may use, re-indexed 0..k-1.
 *
 * @since 0.2.0
 */
import { chargeInFlight, type Policy } from "@loadledger/policies"

import type { RankLoad } from "@loadledger/schema"
import type { RankStatus } from "./Types.js"

/**
 * A policy's state over the usable ranks. `members[j]` is the router's global rank index of the
 * policy's rank `j`; `localOf[i]` is the policy's index of global rank `i` (-1 when rank `i` is
 * not in the view); `generation` changes each time the view is rebuilt.
 *
 * **Treatment of each rank (applied before the policy runs):**
 *
 * | rank condition | treatment |
 * | --- | --- |
 * | known (fresh, decoded, at least one load count, or every field of an explicit `requiredFields`) | in the view; its row as decoded (absent fields absent, a partial row included) |
 * | unknown: stale, frozen publisher, never reported, not in payload, body not decoded, no load count (or an explicitly required field absent), row rejected by the decoder (-1, duplicate rank, invalid number) or holding a corrupt count | out of the view; the in-flight fallback may use it only while no rank is known |
 * | unhealthy: poll refused/reset, timed out, non-2xx; or a proxy connection refused | out of the view and out of the fallback until a poll succeeds again |
 *
 * Because excluded ranks are not in the policy's index space at all, a policy that ignores health
 * (SGLang's load methods, as upstream) can only choose among usable ranks: there is no override
 * after it. When the set of usable ranks changes, the policy's state is rebuilt: `init(k)`, then
 * `observe` of every member's row, then every request still in flight on a member charged again on
 * its rank (`chargeInFlight`: the policy's `charge`, else a pinned route; `carried` lists them, and
 * their `finish` releases them in the new state). A request whose rank left the view is not carried.
 *
 * @category models
 * @since 0.2.0
 */
export interface PolicyView<S> {
  readonly members: ReadonlyArray<number>
  readonly localOf: ReadonlyArray<number>
  readonly state: S
  readonly generation: number
  /**
   * Requests still in flight when this view was built, charged again into `state` on the rank they
   * hold (a pinned route): their `finish` releases them here. Absent: none carried.
   */
  readonly carried?: ReadonlySet<string> | undefined
}

/** A request in flight as a view rebuild sees it: its global rank and prompt length. */
type InFlight = readonly [string, { readonly rank: number; readonly inputLength?: number | undefined }]

/**
 * Charge the requests in flight into a fresh policy state: each on the local rank of its global
 * rank, by `chargeInFlight` (a request whose rank left the view, or that the policy refuses to
 * charge there, is not carried). The state law "a change of the worker set or a failed poll loses nothing in flight".
 */
const carry = <S>(
  policy: Policy<S>,
  state: S,
  localOf: ReadonlyArray<number>,
  inflight: Iterable<InFlight>,
  now: number
): { readonly state: S; readonly carried: ReadonlySet<string> } => {
  const carried = new Set<string>()
  let st = state
  for (const [requestId, p] of inflight) {
    const local = localOf[p.rank]
    if (local === undefined || local < 0) continue
    const r = chargeInFlight(policy, st, { requestId, inputLength: p.inputLength ?? 1 }, local, now)
    if (r._tag === "Routed") {
      st = r.state
      carried.add(requestId)
    }
  }
  return { state: st, carried }
}

/**
 * The global indices of the ranks the policy may use at this moment: the known ones.
 *
 * @example
 * ```ts
 * import { usableRanks } from "@loadledger/live"

 * const row = { dpRank: 0 }
 * usableRanks([
 *   { index: 0, id: "u@0", workerUrl: "u", dpRank: 0, condition: "known", row },
 *   { index: 1, id: "u@1", workerUrl: "u", dpRank: 1, condition: "unknown", reason: "stale", row }
 * ]) // => [0]
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const usableRanks = (ranks: ReadonlyArray<RankStatus>): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (const s of ranks) if (s.condition === "known") out.push(s.index)
  return out
}

/**
 * A known rank's row as the policy sees it: `dpRank` is its index in the view; `worker` and
 * `workerDpRank` keep its identity.
 *
 * @example
 * ```ts
 * import { viewRow } from "@loadledger/live"

 * viewRow({ dpRank: 5, worker: "u", workerDpRank: 1, numRunningReqs: 2 }, 0)
 * // => { dpRank: 0, worker: "u", workerDpRank: 1, numRunningReqs: 2 }
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const viewRow = (row: RankLoad, local: number): RankLoad => ({ ...row, dpRank: local })

/**
 * Build the view for `members` (global indices) from the ranks' current rows: a fresh policy state
 * for `members.length` ranks that has observed every member's row.
 *
 * @example
 * ```ts
 * import { buildView } from "@loadledger/live"

 * import { totalRequests } from "@loadledger/policies"

 * const row = (i: number) => ({ dpRank: i, numRunningReqs: i, numWaitingReqs: 0, numTotalTokens: 0, timestamp: 1 })
 * const ranks = [0, 1, 2].map((i) => ({ index: i, id: `u@${i}`, workerUrl: "u", dpRank: i, condition: "known" as const, row: row(i) }))
 * const v = buildView(totalRequests, ranks, [0, 2], 1, 1)
 * v.localOf // => [0, -1, 1]
 * v.generation // => 1
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const buildView = <S>(
  policy: Policy<S>,
  ranks: ReadonlyArray<RankStatus>,
  members: ReadonlyArray<number>,
  generation: number,
  now: number,
  inflight: Iterable<InFlight> = []
): PolicyView<S> => {
  const localOf: Array<number> = Array.from({ length: ranks.length }, () => -1)
  const rows: Array<RankLoad> = []
  for (let j = 0; j < members.length; j++) {
    const g = members[j]!
    localOf[g] = j
    rows.push(viewRow(ranks[g]!.row, j))
  }
  const init = policy.init(members.length)
  const observed = rows.length > 0 ? policy.observe(init, rows, now) : init
  const { state, carried } = carry(policy, observed, localOf, inflight, now)
  return { members, localOf, state, generation, ...(carried.size > 0 ? { carried } : {}) }
}

/**
 * True when `members` (sorted global indices) are exactly the view's.
 *
 * @example
 * ```ts
 * import { sameMembers } from "@loadledger/live"

 * sameMembers([0, 2], [0, 2]) // => true
 * sameMembers([0, 2], [0, 1]) // => false
 * ```
 *
 * @category predicates
 * @since 0.2.0
 */
export const sameMembers = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The view for `ranks` at `now`: `view` itself when its members are still exactly the usable
 * ranks, else a new view of the usable ranks (next generation) built from their current rows.
 *
 * @example
 * ```ts
 * import { buildView, refreshView } from "@loadledger/live"

 * import { totalRequests } from "@loadledger/policies"

 * const row = (i: number) => ({ dpRank: i, numRunningReqs: i, numWaitingReqs: 0, numTotalTokens: 0, timestamp: 1 })
 * const rank = (i: number, condition: "known" | "unknown") => ({ index: i, id: `u@${i}`, workerUrl: "u", dpRank: i, condition, row: row(i) })
 * const v = buildView(totalRequests, [rank(0, "known"), rank(1, "known")], [0, 1], 1, 1)
 * refreshView(totalRequests, v, [rank(0, "known"), rank(1, "known")], 2) === v // => true
 * // rank 1 went stale: it is unknown now, so it leaves the view
 * const w = refreshView(totalRequests, v, [rank(0, "known"), { ...rank(1, "unknown"), reason: "stale" as const }], 2)
 * w.members // => [0]
 * w.generation // => 2
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const refreshView = <S>(
  policy: Policy<S>,
  view: PolicyView<S>,
  ranks: ReadonlyArray<RankStatus>,
  now: number,
  inflight: Iterable<InFlight> = []
): PolicyView<S> => {
  const members = usableRanks(ranks)
  return sameMembers(members, view.members)
    ? view
    : buildView(policy, ranks, members, view.generation + 1, now, inflight)
}
