/**
 * A gateway as a live-router source: a fake gateway HTTP server serves real-format fleet reports
 * (packages/schema/test/fixtures/gateways); the router expands them into (worker, dpRank) ranks,
 * routes to the workers named by URL, observes the others, shows decode failures with their path,
 * and treats workers leaving and coming back as workers that come and go.
 */
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { totalRequests } from "@loadledger/policies"
import { afterEach, expect, it } from "vitest"
import {
  type GatewayKind,
  parseServeArgs,
  type ServeArgs,
  startLiveRouter,
  startServe
} from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const fixture = (name: string) =>
  readFileSync(new URL(`../../schema/test/fixtures/gateways/${name}`, import.meta.url), "utf8")

/** A gateway whose body can be swapped between polls. */
const fakeGateway = async (body: string) => {
  const state = { body, polls: 0 }
  const server: Server = createServer((_req, res) => {
    state.polls++
    res.writeHead(200, { "content-type": "text/plain" })
    res.end(state.body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const addr = server.address()
  const port = typeof addr === "object" && addr !== null ? addr.port : 0
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${port}`, state }
}

const routerOn = (url: string, kind: GatewayKind) => {
  const r = startLiveRouter({
    sources: [],
    gateways: [{ url, kind, intervalMs: 20, timeoutMs: 1000 }],
    policy: totalRequests,
    staleAfterSeconds: 5,
    ageClock: "receipt",
    decodeBudgetMs: 20_000
  })
  cleanups.push(() => r.close())
  return r
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 10))
  }
}

it("expands SMG /get_loads into (worker, dpRank) ranks, never merged; rank-less loads kept apart", async () => {
  const g = await fakeGateway(fixture("smg_get_loads_fleet.json"))
  const r = routerOn(g.url, "smg-loads")
  await r.ready
  expect(r.ranks().map((s) => [s.id, s.condition, s.row.numRunningReqs])).toEqual([
    ["http://decode-0:30000@0", "known", 48],
    ["http://decode-0:30000@1", "known", 30],
    ["http://decode-1:30000@0", "known", 5],
    ["http://decode-1:30000@1", "known", 0],
    ["http://vllm-0:8000@0", "known", 7]
  ])
  const [status] = r.gateways()
  expect(status?.workers).toEqual(["http://decode-0:30000", "http://decode-1:30000", "http://vllm-0:8000"])
  // the worker the gateway got no load from: a rank-less unknown, no invented rank 0 in the ledger
  expect(status?.rankless).toEqual([
    {
      worker: "http://decode-2:30000",
      unknown: { reason: "unreachable", message: "$.workers[3].load is -1: the gateway got no load" }
    }
  ])
  expect(r.ranks().some((s) => s.id.startsWith("http://decode-2:30000"))).toBe(false)
  expect(status?.notices.map((n) => n._tag)).toContain("UnknownField")
})

it("reads the SMG metrics page's several workers by (worker, dp_rank); a removed worker's -1 series is no worker", async () => {
  const g = await fakeGateway(fixture("smg_metrics_page.prom"))
  const r = routerOn(g.url, "smg-metrics")
  await r.ready
  const byId = new Map(r.ranks().map((s) => [s.id, s]))
  expect(byId.get("http://decode-0:30000@1")?.row.numRunningReqs).toBe(30)
  expect(byId.get("http://decode-1:30000@0")?.row.numRunningReqs).toBe(5)
  expect([...byId.keys()].some((id) => id.startsWith("http://decode-9"))).toBe(false)
  expect(
    r
      .gateways()[0]
      ?.notices.map((n) => n.message)
      .join("\n")
  ).toContain("mark of a removed worker")
})

it("Dynamo and llm-d name no URL: observe-only, nothing routed, the rows shown per worker", async () => {
  const d = await fakeGateway(fixture("dynamo_frontend_metrics.prom"))
  const r = routerOn(d.url, "dynamo-metrics")
  await r.ready
  expect(r.ranks()).toEqual([])
  const observed = r.gateways()[0]!.observed
  expect(observed.map((o) => [o.worker, o.rows.map((x) => x.dpRank)])).toEqual([
    ["7890", [0, 1]],
    ["7891", [0]]
  ])
  expect(r.route({ requestId: "x", inputLength: 8 })).toMatchObject({ reason: "NoAvailableRanks" })
  const e = await fakeGateway(fixture("llmd_epp_metrics.prom"))
  const l = routerOn(e.url, "llm-d-metrics")
  await l.ready
  expect(l.gateways()[0]!.observed.find((o) => o.worker === "pod1")?.rows[0]).toMatchObject({
    dpRank: 0,
    numWaitingReqs: 100
  })
})

const fleet = (workers: ReadonlyArray<readonly [string, ReadonlyArray<number>]>) =>
  JSON.stringify({
    workers: workers.map(([worker, running]) => ({
      worker,
      load: 0,
      details: {
        timestamp: "",
        dp_rank_count: running.length,
        loads: running.map((n, dpRank) => ({ dp_rank: dpRank, num_running_reqs: n, num_waiting_reqs: 0 }))
      }
    }))
  })

it("a decode failure names the path in the ranks' status and the gateway's; the next good report clears it", async () => {
  const g = await fakeGateway(fleet([["http://a:1", [1, 2]]]))
  const r = routerOn(g.url, "smg-loads")
  await r.ready
  g.state.body = fleet([["http://a:1", [1, 2]]]).replace('"dp_rank":1', '"dp_rank":"one"')
  await until(() => r.ranks()[0]?.reason === "decode-failed")
  expect(r.ranks()[1]?.row.unknown?.message).toContain("$.workers[0].details.loads[1].dp_rank")
  expect(r.gateways()[0]?.failure?.message).toContain("$.workers[0].details.loads[1].dp_rank")
  g.state.body = fleet([["http://a:1", [1, 2]]])
  await until(() => r.ranks()[0]?.condition === "known")
  expect(r.gateways()[0]?.failure).toBeUndefined()
})

it("workers leaving and coming back: in-flight kept and carried, ranks dropped once idle", async () => {
  const g = await fakeGateway(
    fleet([
      ["http://a:1", [0]],
      ["http://b:1", [0, 0]]
    ])
  )
  const r = routerOn(g.url, "smg-loads")
  await r.ready
  const d = r.route({ requestId: "on-a", inputLength: 8 })
  expect(d).toMatchObject({ rankId: "http://a:1@0" })
  g.state.body = fleet([["http://b:1", [0, 0]]])
  await until(() => r.ranks()[0]?.reason === "ejected")
  // a's request is still counted on its rank; nothing new goes there
  expect(r.inflight()).toEqual([1, 0, 0])
  for (let i = 0; i < 4; i++)
    expect(r.route({ requestId: `n${i}`, inputLength: 8 })).toMatchObject({
      rankId: expect.stringMatching(/^http:\/\/b:1@/)
    })
  for (let i = 0; i < 4; i++) r.finish(`n${i}`)
  g.state.body = fleet([
    ["http://a:1", [0]],
    ["http://b:1", [0, 0]]
  ])
  await until(() => r.ranks()[0]?.condition === "known")
  expect(r.inflight()).toEqual([1, 0, 0])
  // gone again, and now its last request ends: the rank leaves the ledger
  g.state.body = fleet([["http://b:1", [0, 0]]])
  await until(() => r.ranks()[0]?.reason === "ejected")
  expect(r.finish("on-a")).toBe(true)
  expect(r.ranks().map((s) => s.id)).toEqual(["http://b:1@0", "http://b:1@1"])
  expect(r.inflight()).toEqual([0, 0])
})

it("serve --gateway smg=URL routes to the workers the gateway names and shows the gateway in /router/ranks", async () => {
  const e = await startFakeEngine({ dpSize: 2 })
  cleanups.push(() => e.close())
  const g = await fakeGateway(fleet([[e.url, [3, 0]]]))
  const args = parseServeArgs([
    "--gateway",
    `smg=${g.url}`,
    "--port",
    "0",
    "--interval-ms",
    "20"
  ]) as ServeArgs
  expect(args.gateways).toEqual([{ kind: "smg-loads", url: g.url }])
  const logs: Array<Record<string, unknown>> = []
  const s = await startServe(args, totalRequests, { log: (x) => logs.push(x) })
  cleanups.push(() => s.close())
  await s.router.ready
  const res = await fetch(`${s.url}/v1/completions`, {
    method: "POST",
    body: JSON.stringify({ prompt: "hi" })
  })
  expect(res.headers.get("x-loadledger-rank")).toBe(`${e.url}@1`)
  await res.text()
  const ranks = (await (await fetch(`${s.url}/router/ranks`)).json()) as {
    gateways: ReadonlyArray<{ url: string; workers: ReadonlyArray<string> }>
  }
  expect(ranks.gateways.map((x) => [x.url, x.workers])).toEqual([[g.url, [e.url]]])
  expect(logs.find((l) => l.msg === "worker-added")).toMatchObject({
    worker: e.url,
    from: `gateway ${g.url}`
  })
})

it("parseServeArgs checks --gateway", () => {
  expect(parseServeArgs(["--gateway", "nginx=http://h:1"])).toEqual({
    error:
      '--gateway is KIND=URL, KIND one of smg, dynamo, llm-d, smg-loads, smg-metrics, dynamo-metrics, llm-d-metrics; got "nginx=http://h:1"'
  })
  expect(parseServeArgs(["--gateway", "smg=http://h:1", "--gateway", "llm-d=http://h:1/"])).toEqual({
    error: "--gateway http://h:1 is given twice"
  })
})

it("one worker's rank reported twice is that rank's duplicate-rank, the other worker's same rank stays known", async () => {
  const body = JSON.parse(
    fleet([
      ["http://a:1", [1, 2]],
      ["http://b:1", [4, 5]]
    ])
  ) as {
    workers: Array<{ details: { loads: Array<{ dp_rank: number }> } }>
  }
  body.workers[0]!.details.loads[1]!.dp_rank = 0
  const g = await fakeGateway(JSON.stringify(body))
  const r = routerOn(g.url, "smg-loads")
  await r.ready
  expect(r.ranks().map((s) => [s.id, s.reason ?? s.row.numRunningReqs])).toEqual([
    // a's ranks are those its report names (rank 0, twice): one rank, rejected, not two merged
    ["http://a:1@0", "rejected-row"],
    ["http://b:1@0", 4],
    ["http://b:1@1", 5]
  ])
  expect(r.ranks()[0]?.row.unknown?.message).toContain("worker http://a:1 dp_rank 0 reported 2 times")
})
