/**
 * Shared bookings through Redis or Valkey (ioredis): each replica keeps its in-flight bookings in
 * a hash, announces every placement and release on one channel, and proves it is alive with a key
 * that expires; a replica that joins or reconnects reads the others' hashes, writes its own and
 * says so (`s`), and the others read its hash again: whichever of two replicas reconnects first,
 * each ends holding the other's bookings. A replica alive in the store but never heard (its
 * announcement missed) is read at the next heartbeat.
 *
 * @since 0.4.0
 */
import { hostname } from "node:os"
import type { Redis } from "ioredis"
import type { Booking, BookingHandlers, SharedBookings } from "./Bookings.js"
import { booking, type Event, isEvent } from "./internal/bookingWire.js"

/**
 * Options: `url` (`redis://host:6379`, `valkey://` is read as `redis://`), `group` (the key prefix
 * the replicas of one fleet share; default `default`), `replica` (this replica's id; default
 * `<hostname>-<pid>-<random>`), `heartbeatMs` (default 1 000) and `ttlMs` (default 5 000): a replica
 * not heard for `ttlMs` is gone, and its bookings with it.
 *
 * @category models
 * @since 0.4.0
 */
export interface RedisBookingsOptions {
  readonly url: string
  readonly group?: string | undefined
  readonly replica?: string | undefined
  readonly heartbeatMs?: number | undefined
  readonly ttlMs?: number | undefined
}

/**
 * A `SharedBookings` over Redis / Valkey. Nothing connects before `start`; ioredis is loaded then.
 * A lost connection (server gone, network cut) is reported at once (`connection(false, ...)`: the
 * router drops the others' bookings and routes on its own counts) and retried every 0.2 to 2 s;
 * on reconnection this replica's own bookings are written again and the others' read.
 * Publishing never waits: a placement while the store is lost is not announced (its release
 * neither), and the next connection republishes what is still in flight.
 *
 * **Delay**: a placement reaches the other replicas one store round trip later (loopback: well
 * under 1 ms); requests placed by two replicas closer together than that may both see the same
 * counts, as two front ends of one engine do.
 *
 * @example
 * ```ts
 * import { makeRedisBookings } from "@loadledger/live"
 * const b = makeRedisBookings({ url: "redis://127.0.0.1:6379", group: "fleet-a", replica: "r1" })
 * b.replica // => "r1"
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const makeRedisBookings = (options: RedisBookingsOptions): SharedBookings => {
  const replica = options.replica ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const prefix = `loadledger:${options.group ?? "default"}:`
  const channel = `${prefix}events`
  const hashOf = (r: string) => `${prefix}bookings:${r}`
  const aliveOf = (r: string) => `${prefix}alive:${r}`
  const heartbeatMs = options.heartbeatMs ?? 1000
  const ttlMs = options.ttlMs ?? 5000
  const url = options.url.replace(/^valkey(s?):/, "redis$1:")
  let cmd: Redis | undefined
  let sub: Redis | undefined
  let handlers: BookingHandlers | undefined
  let own: () => ReadonlyArray<Booking> = () => []
  let connected = false
  let buffer: Array<Event> | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  const heard = new Set<string>()
  // replicas whose hash is being read again, with their events meanwhile; a later read wins
  const refreshing = new Map<string, { readonly read: number; readonly pending: Array<Event> }>()
  let reads = 0
  const noop = () => {}

  const apply = (e: Event) => {
    if (e.r === replica || handlers === undefined) return
    if (e.o === "s") return void refresh(e.r)
    const reading = refreshing.get(e.r)
    if (reading !== undefined) return void reading.pending.push(e)
    if (e.o === "g") {
      heard.delete(e.r)
      return handlers.gone(e.r)
    }
    heard.add(e.r)
    if (e.o === "p") handlers.placed({ replica: e.r, requestId: e.i, rankId: e.k, inputLength: e.n })
    else handlers.released(e.r, e.i)
  }
  const aliveReplicas = async (c: Redis): Promise<Array<string>> => {
    const out: Array<string> = []
    let cursor = "0"
    do {
      const [next, keys] = await c.scan(cursor, "MATCH", aliveOf("*"), "COUNT", 1000)
      cursor = next
      for (const k of keys) out.push(k.slice(aliveOf("").length))
    } while (cursor !== "0")
    return out
  }
  /** Replace what this replica holds of `r` with `r`'s hash now, then apply `r`'s events meanwhile. */
  const refresh = async (r: string) => {
    const c = cmd
    if (c === undefined || r === replica || !connected) return
    const mine = { read: ++reads, pending: [] as Array<Event> }
    refreshing.set(r, mine)
    try {
      const all = await c.hgetall(hashOf(r))
      if (refreshing.get(r) !== mine) return
      refreshing.delete(r)
      if (!connected || handlers === undefined) return
      handlers.gone(r)
      heard.add(r)
      for (const [id, v] of Object.entries(all)) {
        const b = booking(r, id, v)
        if (b !== undefined) handlers.placed(b)
      }
      for (const e of mine.pending) apply(e)
    } catch {
      // the connection went: the next resync reads every hash
      if (refreshing.get(r) === mine) refreshing.delete(r)
    }
  }
  const beat = async (c: Redis) => {
    await c.pipeline().set(aliveOf(replica), "1", "PX", ttlMs).pexpire(hashOf(replica), ttlMs).exec()
    const alive = new Set(await aliveReplicas(c))
    for (const r of [...heard])
      if (!alive.has(r)) {
        heard.delete(r)
        handlers?.gone(r)
      }
    for (const r of alive) if (r !== replica && !heard.has(r) && !refreshing.has(r)) void refresh(r)
  }
  const lost = (message: string) => {
    if (!connected) return
    connected = false
    buffer = undefined
    refreshing.clear()
    handlers?.connection(false, [], message)
  }
  /** Both connections are up: write our bookings, read the others', then apply what came meanwhile. */
  const resyncOnce = async () => {
    const c = cmd
    if (c === undefined || sub?.status !== "ready" || c.status !== "ready" || closed) return
    buffer = []
    try {
      const mine = own()
      const p = c.pipeline().del(hashOf(replica))
      for (const b of mine) p.hset(hashOf(replica), b.requestId, JSON.stringify([b.rankId, b.inputLength]))
      await p
        .set(aliveOf(replica), "1", "PX", ttlMs)
        .pexpire(hashOf(replica), ttlMs)
        .publish(channel, JSON.stringify({ r: replica, o: "s" }))
        .exec()
      const snapshot: Array<Booking> = []
      heard.clear()
      for (const r of await aliveReplicas(c)) {
        if (r === replica) continue
        heard.add(r)
        const all = await c.hgetall(hashOf(r))
        for (const [id, v] of Object.entries(all)) {
          const b = booking(r, id, v)
          if (b !== undefined) snapshot.push(b)
        }
      }
      const pending = buffer ?? []
      buffer = undefined
      refreshing.clear()
      connected = true
      handlers?.connection(true, snapshot)
      for (const e of pending) apply(e)
    } catch (e) {
      buffer = undefined
      lost(`resync failed: ${e instanceof Error ? e.message : String(e)}`)
    }
  }

  // one resync at a time (both connections' `ready` call it): a call during one makes it run once
  // more, and waits for that
  let running: Promise<void> | undefined
  let again = false
  const resync = (): Promise<void> => {
    if (running !== undefined) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          await resyncOnce()
        } while (again)
      } finally {
        running = undefined
      }
    })()
    return running
  }

  return {
    replica,
    start: async (h, ownBookings) => {
      handlers = h
      own = ownBookings
      const { Redis } = await import("ioredis")
      const make = () =>
        new Redis(url, {
          connectionName: `loadledger:${replica}`,
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          retryStrategy: (times) => Math.min(200 * times, 2000)
        })
      cmd = make()
      sub = make()
      for (const c of [cmd, sub]) {
        c.on("error", noop)
        c.on("close", () => lost(`connection to ${url} closed`))
        c.on("ready", () => void resync())
      }
      sub.on("message", (ch: string, text: string) => {
        if (ch !== channel) return
        let e: unknown
        try {
          e = JSON.parse(text)
        } catch {
          return
        }
        if (!isEvent(e)) return
        if (buffer !== undefined) buffer.push(e)
        else if (connected) apply(e)
      })
      // ioredis subscribes again by itself after a reconnection
      await Promise.all([cmd.connect(), sub.connect().then(() => sub?.subscribe(channel))]).catch((e) => {
        handlers?.connection(false, [], `cannot reach ${url}: ${e instanceof Error ? e.message : String(e)}`)
      })
      await resync()
      timer = setInterval(() => {
        if (connected && cmd !== undefined) beat(cmd).catch(noop)
      }, heartbeatMs)
      timer.unref()
    },
    place: (b) => {
      if (!connected || cmd === undefined) return
      const ev: Event = { r: replica, o: "p", i: b.requestId, k: b.rankId, n: b.inputLength }
      cmd
        .pipeline()
        .hset(hashOf(replica), b.requestId, JSON.stringify([b.rankId, b.inputLength]))
        .publish(channel, JSON.stringify(ev))
        .exec()
        .catch(noop)
    },
    release: (requestId) => {
      if (!connected || cmd === undefined) return
      cmd
        .pipeline()
        .hdel(hashOf(replica), requestId)
        .publish(channel, JSON.stringify({ r: replica, o: "r", i: requestId }))
        .exec()
        .catch(noop)
    },
    close: async () => {
      closed = true
      if (timer !== undefined) clearInterval(timer)
      const c = cmd
      if (c !== undefined && connected)
        await c
          .pipeline()
          .del(hashOf(replica), aliveOf(replica))
          .publish(channel, JSON.stringify({ r: replica, o: "g" }))
          .exec()
          .catch(noop)
      connected = false
      for (const x of [cmd, sub]) x?.disconnect()
    }
  }
}
