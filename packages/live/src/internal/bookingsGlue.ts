/**
 * The live router's side of shared bookings: publishes its own placements and releases, folds
 * the other replicas' into its state, and says in its metrics whether the store is reachable.
 *
 * @internal
 */
import { Counter, Gauge, type Registry } from "prom-client"
import type { Booking, SharedBookings } from "../Bookings.js"
import type { RouterState } from "../Router.js"
import { bookRemote, dropRemote, releaseRemote, remoteCount } from "./remote.js"

/** What the glue reads and writes of its router. @internal */
export interface GlueHost<S> {
  readonly get: () => RouterState<S>
  readonly set: (s: RouterState<S>) => void
  readonly clock: () => number
  readonly registry: Registry
  readonly onConnection?: ((connected: boolean, message?: string) => void) | undefined
}

/** The glue: `placed` / `released` for this replica's own requests, `ready`, `close`. @internal */
export interface BookingsGlue {
  readonly placed: (requestId: string, rankId: string, inputLength: number) => void
  readonly released: (requestId: string) => void
  readonly ready: Promise<void>
  readonly close: () => Promise<void>
}

/** Attach `store` to a router. @internal */
export const attachBookings = <S>(store: SharedBookings, host: GlueHost<S>): BookingsGlue => {
  const own = new Map<string, Booking>()
  // the rank index of each rank id, for the ranks the router has now (workers come and go)
  const indexCache = new WeakMap<object, Map<string, number>>()
  const rankOf = (s: RouterState<S>) => {
    let m = indexCache.get(s.heard.ranks)
    if (m === undefined) {
      m = new Map()
      for (let i = 0; i < s.heard.ranks.length; i++) m.set(s.heard.ranks[i]!.id, i)
      indexCache.set(s.heard.ranks, m)
    }
    return m
  }
  let connected = false
  const registers = [host.registry]
  new Gauge({
    name: "loadledger_router_bookings_connected",
    help: "1 while the shared bookings store is reachable; 0 while this replica routes on its own counts.",
    registers,
    collect() {
      this.set(connected ? 1 : 0)
    }
  })
  new Gauge({
    name: "loadledger_router_remote_bookings",
    help: "Requests other replicas placed and have not released, as this replica holds them.",
    registers,
    collect() {
      this.set(remoteCount(host.get()))
    }
  })
  const losses = new Counter({
    name: "loadledger_router_bookings_lost_total",
    help: "Times the shared bookings store was lost (each time, other replicas' bookings are dropped).",
    registers
  })
  const update = (f: (s: RouterState<S>, now: number) => RouterState<S>) =>
    host.set(f(host.get(), host.clock()))
  const ready = store.start(
    {
      placed: (b) => update((s, now) => bookRemote(s, rankOf(s), b, now)),
      released: (replica, id) => update((s, now) => releaseRemote(s, replica, id, now)),
      gone: (replica) => update((s, now) => dropRemote(s, now, replica)),
      connection: (up, snapshot, message) => {
        if (!up && connected) losses.inc()
        connected = up
        update((s, now) => {
          let out = dropRemote(s, now)
          for (const b of snapshot) out = bookRemote(out, rankOf(out), b, now)
          return out
        })
        host.onConnection?.(up, message)
      }
    },
    () => [...own.values()]
  )
  return {
    placed: (requestId, rankId, inputLength) => {
      const b = { replica: store.replica, requestId, rankId, inputLength }
      own.set(requestId, b)
      store.place(b)
    },
    released: (requestId) => {
      if (own.delete(requestId)) store.release(requestId)
    },
    ready,
    close: () => store.close()
  }
}
