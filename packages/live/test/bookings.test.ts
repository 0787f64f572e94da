/**
 * Shared bookings across router replicas, against a real redis-server / valkey-server started here
 * (skipped only when neither binary is installed; `.ci/run` installs one): a burst over N replicas
 * from one stale report ends within 1 of one router's per-rank in-flight (for policies that charge
 * a request pinned to a rank as they charge their own: the own policies; SGLang's and vLLM's
 * balancers, as upstream, do not charge a pinned request's load, only count it); a replica that loses the
 * store keeps routing on its own counts and says so in its metrics; a replica that stops takes its
 * bookings with it.
 */
import { findPolicy } from "@loadledger/policies"
import { afterEach, describe, expect, it } from "vitest"
import {
  type LiveRouter,
  makeMemoryBookings,
  makeRedisBookings,
  type SharedBookings,
  startLiveRouter
} from "../src/index.js"
import { type FakeEngine, startFakeEngine } from "../src/testing/index.js"
import { redisBinary, startRedisServer } from "./redisServer.js"

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
const until = async (cond: () => boolean | Promise<boolean>, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(10)
  }
}

/** One report, never refreshed in the test: rank 0 of the first engine runs 6 requests, the rest 0. */
const staleReport = (running: ReadonlyArray<number>) =>
  JSON.stringify({
    timestamp: new Date().toISOString(),
    version: "test",
    loads: running.map((r, dp_rank) => ({
      dp_rank,
      timestamp: 1,
      num_running_reqs: r,
      num_waiting_reqs: 0,
      num_used_tokens: 0,
      num_total_tokens: 0,
      token_usage: 0
    }))
  })

const engines = async (): Promise<Array<FakeEngine>> => {
  const es = await Promise.all([0, 1].map(() => startFakeEngine({ dpSize: 2 })))
  es[0]!.set({ loads: { _tag: "body", body: staleReport([6, 0]), contentType: "application/json" } })
  es[1]!.set({ loads: { _tag: "body", body: staleReport([0, 0]), contentType: "application/json" } })
  for (const e of es) cleanups.push(() => e.close())
  return es
}

const replica = (es: ReadonlyArray<FakeEngine>, policy: string, bookings?: SharedBookings): LiveRouter => {
  const r = startLiveRouter({
    // polled once: the report every replica routes the whole burst on
    sources: es.map((e) => ({
      url: e.url,
      dpSize: 2,
      kind: "sglang-v1-loads" as const,
      intervalMs: 600_000,
      timeoutMs: 2000
    })),
    policy: findPolicy(policy)!.make({ seed: 1 }),
    staleAfterSeconds: 600,
    bookings
  })
  cleanups.push(() => r.close())
  return r
}

/** `requests` requests, request i on replica i mod N, `gapMs` apart, all held in flight: the placements per rank over all replicas. */
const burst = async (rs: ReadonlyArray<LiveRouter>, requests: number, gapMs: number) => {
  for (let i = 0; i < requests; i++) {
    const d = rs[i % rs.length]!.route({ requestId: `q${i}`, inputLength: 256 })
    expect(d._tag).toBe("Decision")
    await sleep(gapMs)
  }
  const perRank = rs[0]!.decisions().map(() => 0)
  for (const r of rs)
    r.decisions().forEach((n, i) => {
      perRank[i]! += n
    })
  return perRank
}

const maxGap = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
  Math.max(...a.map((x, i) => Math.abs(x - b[i]!)))

const binary = redisBinary()

describe.skipIf(binary === undefined)("shared bookings through a real store", () => {
  const server = async () => {
    const s = await startRedisServer(binary!)
    cleanups.push(() => s.stop())
    return s
  }

  for (const policy of ["ledger-balanced-requests", "cache-affinity"])
    it(`${policy}: a burst over 3 replicas from one stale report ends within 1 of one router's per-rank in-flight`, async () => {
      const es = await engines()
      const one = replica(es, policy)
      await one.ready
      const alone = await burst([one], 24, 0)
      const s = await server()
      const shared = [0, 1, 2].map((i) =>
        replica(es, policy, makeRedisBookings({ url: s.url, group: `burst-${policy}`, replica: `r${i}` }))
      )
      await Promise.all(shared.map((r) => r.ready))
      const together = await burst(shared, 24, 3)
      expect(together.reduce((a, b) => a + b, 0)).toBe(24)
      expect(maxGap(together, alone)).toBeLessThanOrEqual(1)
      // every replica holds the other replicas' requests too: the same per-rank in-flight everywhere
      await until(
        () => shared.every((r) => r.inflight().join() === together.join()),
        2000,
        "in-flight agreed"
      )
      // without the store the same burst piles onto the same ranks
      const apart = [0, 1, 2].map(() => replica(es, policy))
      await Promise.all(apart.map((r) => r.ready))
      const apartRanks = await burst(apart, 24, 3)
      expect(maxGap(apartRanks, alone)).toBeGreaterThanOrEqual(2)
      // releases reach every replica: all back to 0
      for (let i = 0; i < 24; i++) shared[i % 3]!.finish(`q${i}`)
      await until(() => shared.every((r) => r.inflight().every((n) => n === 0)), 2000, "released everywhere")
    })

  it("a replica that loses the store routes on its own counts, says so in its metrics, and reads the others' bookings again when it is back", async () => {
    const es = await engines()
    const s = await server()
    const [a, b] = ["a", "b"].map((id) =>
      replica(
        es,
        "vllm-kv-pressure",
        makeRedisBookings({ url: s.url, group: "loss", replica: id, heartbeatMs: 100, ttlMs: 1000 })
      )
    ) as [LiveRouter, LiveRouter]
    await Promise.all([a.ready, b.ready])
    for (let i = 0; i < 4; i++) expect(b.route({ requestId: `b${i}`, inputLength: 64 })._tag).toBe("Decision")
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 4, 2000, "a holds b's 4")
    expect(await a.metrics()).toContain("loadledger_router_bookings_connected 1")
    await s.stop()
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 0, 3000, "a dropped b's bookings")
    const text = await a.metrics()
    expect(text).toContain("loadledger_router_bookings_connected 0")
    expect(text).toContain("loadledger_router_bookings_lost_total 1")
    // still routing, on its own counts
    expect(a.route({ requestId: "a0", inputLength: 64 })._tag).toBe("Decision")
    expect(a.inflight().reduce((x, y) => x + y, 0)).toBe(1)
    await s.start()
    // back: each replica republishes its own and reads the other's
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 5, 8000, "a holds its 1 and b's 4 again")
    await until(() => b.inflight().reduce((x, y) => x + y, 0) === 5, 8000, "b holds its 4 and a's 1")
    expect(await a.metrics()).toContain("loadledger_router_bookings_connected 1")
  })

  it("a replica cut from the store alone rewrites its hash on return, and the others drop what it released meanwhile", async () => {
    const es = await engines()
    const s = await server()
    const opts = (id: string) => ({ url: s.url, group: "cut", replica: id, heartbeatMs: 100, ttlMs: 5000 })
    const a = replica(es, "vllm-kv-pressure", makeRedisBookings(opts("a")))
    const b = replica(es, "vllm-kv-pressure", makeRedisBookings(opts("b")))
    await Promise.all([a.ready, b.ready])
    for (let i = 0; i < 4; i++) b.route({ requestId: `b${i}`, inputLength: 64 })
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 4, 2000, "a holds b's 4")
    // only b's two connections go (a stays connected and keeps b's 4)
    const { Redis } = await import("ioredis")
    const admin = new Redis(s.url)
    cleanups.push(async () => void admin.disconnect())
    const list = String(await admin.client("LIST"))
    const ids = [...list.matchAll(/id=(\d+) .*name=loadledger:b /g)].map((m) => m[1]!)
    expect(ids).toHaveLength(2)
    for (const id of ids) await admin.client("KILL", "ID", id)
    await until(async () => (await b.metrics()).includes("bookings_connected 0"), 2000, "b lost the store")
    // b finishes two while cut: nobody hears those releases
    b.finish("b0")
    b.finish("b1")
    await until(async () => (await b.metrics()).includes("bookings_connected 1"), 5000, "b back")
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 2, 3000, "a holds b's 2 left")
  })

  it("a replica alive in the store but never announced is read at the next heartbeat, and dropped when its key expires", async () => {
    const es = await engines()
    const s = await server()
    const a = replica(
      es,
      "vllm-kv-pressure",
      makeRedisBookings({ url: s.url, group: "quiet", replica: "a", heartbeatMs: 100, ttlMs: 5000 })
    )
    await a.ready
    const { Redis } = await import("ioredis")
    const raw = new Redis(s.url)
    cleanups.push(async () => void raw.disconnect())
    // a replica "c" as another version might leave it: hash and alive key, no event on the channel
    await raw.hset(
      "loadledger:quiet:bookings:c",
      "c0",
      JSON.stringify([a.ranks()[1]!.id, 64]),
      "c1",
      JSON.stringify([a.ranks()[1]!.id, 64])
    )
    await raw.set("loadledger:quiet:alive:c", "1", "PX", 5000)
    await until(() => a.inflight()[1] === 2, 2000, "a reads c's 2 at a heartbeat")
    await raw.del("loadledger:quiet:alive:c")
    await until(() => a.inflight()[1] === 0, 2000, "c gone with its key")
  })

  it("a replica that stops takes its bookings with it", async () => {
    const es = await engines()
    const s = await server()
    const a = replica(es, "ledger-balanced", makeRedisBookings({ url: s.url, group: "stop", replica: "a" }))
    const b = replica(es, "ledger-balanced", makeRedisBookings({ url: s.url, group: "stop", replica: "b" }))
    await Promise.all([a.ready, b.ready])
    b.route({ requestId: "x", inputLength: 64 })
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 1, 2000, "a holds b's request")
    await b.close()
    await until(() => a.inflight().reduce((x, y) => x + y, 0) === 0, 2000, "b's request dropped")
  })
})

describe("shared bookings in one process (makeMemoryBookings)", () => {
  it("the same burst, over the in-process hub, also ends within 1 of one router", async () => {
    const es = await engines()
    const one = replica(es, "ledger-balanced-requests")
    await one.ready
    const alone = await burst([one], 24, 0)
    const hub = makeMemoryBookings()
    const rs = [0, 1, 2].map((i) => replica(es, "ledger-balanced-requests", hub.replica(`m${i}`)))
    await Promise.all(rs.map((r) => r.ready))
    expect(maxGap(await burst(rs, 24, 2), alone)).toBeLessThanOrEqual(1)
  })
})
