/**
 * Shared bookings: how router replicas in front of one fleet tell each other what they placed and
 * released, so that between two load reports N replicas place like one router. The transport is a
 * `SharedBookings` (Redis / Valkey: `startRedisBookings`; in one process, for tests:
 * `makeMemoryBookings`); `startLiveRouter({ bookings })` folds the other replicas' placements into
 * its own in-flight counts and its policy's charges.
 *
 * @since 0.4.0
 */

/**
 * One request in flight that a replica placed: which replica, its request id, the rank
 * (`url@dpRank`, the same on every replica whatever its worker order) and its prompt length.
 *
 * @category models
 * @since 0.4.0
 */
export interface Booking {
  readonly replica: string
  readonly requestId: string
  readonly rankId: string
  readonly inputLength: number
}

/**
 * What a `SharedBookings` tells its router, for other replicas only (never this one's own):
 * `placed` / `released` as they happen; `gone` when a replica stopped (its bookings are void);
 * `connection(true, snapshot)` on each (re)connection with every other replica's bookings at that
 * moment (the router replaces what it held with them); `connection(false, [], message)` when the
 * store is lost (the router drops every other replica's booking and routes on its own counts until
 * the next `connection(true, ...)`). Each call may repeat one already made (a placement seen in a
 * snapshot and as an event): the router applies them idempotently.
 *
 * @category models
 * @since 0.4.0
 */
export interface BookingHandlers {
  readonly placed: (b: Booking) => void
  readonly released: (replica: string, requestId: string) => void
  readonly gone: (replica: string) => void
  readonly connection: (connected: boolean, snapshot: ReadonlyArray<Booking>, message?: string) => void
}

/**
 * A shared store of bookings as one replica sees it: `replica` (this replica's id), `start` (begin
 * receiving; resolves once the first connection is up or has failed), `place` / `release` (publish
 * this replica's own; never blocking routing: a lost store drops them, and the next connection
 * republishes `own()`), `close`.
 *
 * @category models
 * @since 0.4.0
 */
export interface SharedBookings {
  readonly replica: string
  readonly start: (handlers: BookingHandlers, own: () => ReadonlyArray<Booking>) => Promise<void>
  readonly place: (b: Booking) => void
  readonly release: (requestId: string) => void
  readonly close: () => Promise<void>
}

/**
 * An in-process hub of shared bookings: `replica(id)` gives one replica's `SharedBookings`; every
 * booking reaches the others after `delayMs` (default 0: on the next turn of the event loop);
 * `disconnect(id)` / `reconnect(id)` cut and restore one replica's link (to test a lost store).
 *
 * **When to use**: tests and simulations of several replicas in one process; in production, Redis
 * or Valkey (`startRedisBookings`).
 *
 * @example
 * ```ts
 * import { makeMemoryBookings } from "@loadledger/live"
 * const hub = makeMemoryBookings()
 * const a = hub.replica("a")
 * const b = hub.replica("b")
 * const seen: Array<string> = []
 * await b.start({ placed: (x) => seen.push(`${x.replica}:${x.requestId}@${x.rankId}`), released: () => {}, gone: () => {}, connection: () => {} }, () => [])
 * a.place({ replica: "a", requestId: "q1", rankId: "http://h:1@0", inputLength: 8 })
 * await new Promise((r) => setTimeout(r, 5))
 * seen // => ["a:q1@http://h:1@0"]
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const makeMemoryBookings = (delayMs = 0) => {
  const members = new Map<
    string,
    { handlers?: BookingHandlers; own: () => ReadonlyArray<Booking>; up: boolean; held: Map<string, Booking> }
  >()
  const later = (f: () => void) => setTimeout(f, delayMs)
  const others = (id: string) => [...members].filter(([k, m]) => k !== id && m.up && m.handlers !== undefined)
  const snapshot = (id: string) => others(id).flatMap(([, m]) => [...m.held.values()])
  const link = (id: string, up: boolean, message?: string) => {
    const m = members.get(id)
    if (m === undefined) return
    m.up = up
    if (up) for (const b of m.own()) m.held.set(b.requestId, b)
    else m.held.clear()
    later(() => m.handlers?.connection(up, up ? snapshot(id) : [], message))
    for (const [, o] of others(id))
      later(() => {
        if (!up) return o.handlers!.gone(id)
        for (const b of m.held.values()) o.handlers!.placed(b)
      })
  }
  return {
    replica: (id: string): SharedBookings => {
      members.set(id, { own: () => [], up: true, held: new Map() })
      const me = () => members.get(id)!
      return {
        replica: id,
        start: async (handlers, own) => {
          Object.assign(me(), { handlers, own })
          handlers.connection(true, snapshot(id))
        },
        place: (b) => {
          if (!me().up) return
          me().held.set(b.requestId, b)
          for (const [, o] of others(id)) later(() => o.handlers!.placed(b))
        },
        release: (requestId) => {
          if (!me().up) return
          me().held.delete(requestId)
          for (const [, o] of others(id)) later(() => o.handlers!.released(id, requestId))
        },
        close: async () => {
          members.delete(id)
          for (const [, o] of others(id)) later(() => o.handlers!.gone(id))
        }
      }
    },
    disconnect: (id: string) => link(id, false, "disconnected by the test"),
    reconnect: (id: string) => link(id, true)
  }
}
