/**
 * Other replicas' bookings folded into a router value (pure): a booking is in flight on its rank
 * under the key `remote:<replica>:<requestId>`, counted in `inflightPerRank` (so the fallback sees
 * every replica's requests) and charged to the policy as a request pinned to that rank
 * (`routedDpRank`) when the rank is in the view and the policy honours the pin; released with
 * `finish`. Each call is idempotent: a booking already held, or a release of one not held, leaves
 * the state as it is.
 *
 * @internal
 */
import * as HashMap from "effect/HashMap"
import type { Booking } from "../Bookings.js"
import { finish } from "../Route.js"
import type { RouterState } from "../Router.js"

/** The in-flight key of another replica's request. @internal */
export const remoteKey = (replica: string, requestId: string): string => `remote:${replica}:${requestId}`

/** Fold one other replica's booking into `state` at `now`. @internal */
export const bookRemote = <S>(
  state: RouterState<S>,
  rankOf: ReadonlyMap<string, number>,
  b: Booking,
  now: number
): RouterState<S> => {
  const key = remoteKey(b.replica, b.requestId)
  const rank = rankOf.get(b.rankId)
  if (state.error !== undefined || rank === undefined || HashMap.has(state.inflight, key)) return state
  let view = state.view
  const local = view.localOf[rank]
  if (local !== undefined && local >= 0) {
    const r = state.policy.route(
      view.state,
      { requestId: key, inputLength: b.inputLength, routedDpRank: local },
      now
    )
    // a policy that places the pinned request elsewhere is not charged (the count still is)
    if (r._tag === "Routed" && r.rank === local) view = { ...view, state: r.state }
  }
  const perRank = state.inflightPerRank.slice()
  perRank[rank] = perRank[rank]! + 1
  return {
    ...state,
    view,
    inflight: HashMap.set(state.inflight, key, { rank, generation: view.generation }),
    inflightPerRank: perRank
  }
}

/** Release one other replica's booking. @internal */
export const releaseRemote = <S>(
  state: RouterState<S>,
  replica: string,
  requestId: string,
  now: number
): RouterState<S> => finish(state, remoteKey(replica, requestId), now).state

/** Release every booking of `replica` (all replicas' when absent). @internal */
export const dropRemote = <S>(state: RouterState<S>, now: number, replica?: string): RouterState<S> => {
  const prefix = replica === undefined ? "remote:" : remoteKey(replica, "")
  let out = state
  for (const key of HashMap.keys(state.inflight))
    if (key.startsWith(prefix)) out = finish(out, key, now).state
  return out
}

/** How many other replicas' bookings `state` holds. @internal */
export const remoteCount = <S>(state: RouterState<S>): number => {
  let n = 0
  for (const key of HashMap.keys(state.inflight)) if (key.startsWith("remote:")) n++
  return n
}
