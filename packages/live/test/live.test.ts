/**
 * Real parts: loopback fake engines (`@loadledger/live/testing`) serving fixture payloads and
 * faults, the poller, the decode worker, and the proxy exercised through real sockets.
 */
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { totalRequests, totalTokens } from "@loadledger/policies"
import { encodeLoadStatFrame } from "@loadledger/schema"
import { afterEach, describe, expect, it } from "vitest"
import {
  type LiveRouter,
  type LiveRouterConfig,
  type SourceSpec,
  startLiveRouter,
  startProxy
} from "../src/index.js"
import {
  type FakeEngine as FakeWorker,
  nestedLoadsPayload,
  startFakeEngine as startFakeWorker
} from "../src/testing/index.js"

const payload = (name: string) => new URL(`../../../fixtures/payloads/${name}`, import.meta.url).pathname
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const worker = async (o: Parameters<typeof startFakeWorker>[0]) => {
  const w = await startFakeWorker(o)
  cleanups.push(() => w.close())
  return w
}
const live = <S>(c: Omit<LiveRouterConfig<S>, "policy"> & { policy?: LiveRouterConfig<S>["policy"] }) => {
  const r = startLiveRouter({ policy: totalRequests, ...c } as LiveRouterConfig<S>)
  cleanups.push(() => r.close())
  return r
}
const proxyFor = async (router: LiveRouter, firstByteTimeoutMs?: number, idleStreamTimeoutMs?: number) => {
  const p = await startProxy({ router, firstByteTimeoutMs, idleStreamTimeoutMs })
  cleanups.push(() => p.close())
  return p
}
const src = (w: FakeWorker, o: Partial<SourceSpec> = {}): SourceSpec => ({
  url: w.url,
  dpSize: 1,
  kind: "sglang-v1-loads",
  intervalMs: 50,
  timeoutMs: 150,
  ...o
})
const until = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`)
    await sleep(10)
  }
}

interface Reply {
  readonly status: number
  readonly body: string
  readonly rank: string | undefined
}
const post = (
  base: string,
  path: string,
  body: unknown,
  requestId: string,
  opts: { abortAfterFirstChunk?: boolean } = {}
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const data = JSON.stringify(body)
    const req = httpRequest(
      new URL(path, base),
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(data),
          "x-request-id": requestId
        }
      },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => {
          text += c
          if (opts.abortAfterFirstChunk) {
            req.destroy()
            resolve({
              status: res.statusCode!,
              body: text,
              rank: res.headers["x-loadledger-rank"] as string
            })
          }
        })
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            body: text,
            rank: res.headers["x-loadledger-rank"] as string
          })
        )
        res.on("error", reject)
      }
    )
    req.on("error", (e) => (opts.abortAfterFirstChunk ? undefined : reject(e)))
    req.end(data)
  })

describe("polling real payloads", () => {
  it("SGLang /v1/loads in the first era (docs example, with aggregate) decodes to rank 0's numbers", async () => {
    const w = await worker({ loads: { _tag: "file", path: payload("sglang_v1_loads_docs_example.json") } })
    const r = live({ sources: [src(w)], staleAfterSeconds: 5, ageClock: "receipt" })
    await r.ready
    const s = r.ranks()[0]!
    expect(s.condition).toBe("known")
    expect(s.row).toMatchObject({ numRunningReqs: 5, numWaitingReqs: 2, numTotalTokens: 100000 })
  })

  it("legacy /get_load (dp_rank null, perf_counter ts_tic) is rank 0 with present zeros", async () => {
    const w = await worker({
      loadPaths: ["/get_load"],
      loads: { _tag: "file", path: payload("sglang_get_load_legacy_single_rank.json") }
    })
    const r = live({
      sources: [src(w, { kind: "sglang-get-load" })],
      staleAfterSeconds: 5,
      ageClock: "receipt"
    })
    await r.ready
    expect(r.ranks()[0]).toMatchObject({
      condition: "known",
      row: { numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
    })
  })

  it("a newer /v1/loads payload (accelerator, num_accelerators, unknown keys) still decodes", async () => {
    const body = JSON.stringify({
      accelerator: "NVIDIA GB300",
      num_accelerators: 16,
      some_future_key: { x: 1 },
      loads: [
        {
          dp_rank: 0,
          timestamp: 1.25,
          num_running_reqs: 3,
          num_waiting_reqs: 2,
          num_total_tokens: 256,
          new_field: 9
        }
      ]
    })
    const w = await worker({ loads: { _tag: "body", body, contentType: "application/json" } })
    const r = live({ sources: [src(w)], staleAfterSeconds: 5, ageClock: "receipt" })
    await r.ready
    expect(r.ranks()[0]?.row).toMatchObject({ numRunningReqs: 3, numWaitingReqs: 2, numTotalTokens: 256 })
  })

  it("vLLM /metrics (production-stack #318): present zeros are values, so the rank is known with 0/0", async () => {
    const w = await worker({
      loads: { _tag: "file", path: payload("vllm_metrics_qwen25coder32b__production_stack_issue318.prom") }
    })
    // no requiredFields: a vllm-metrics source requires the request counts it publishes, not tokens
    const r = live({ sources: [src(w, { kind: "vllm-metrics" })], staleAfterSeconds: 5, ageClock: "receipt" })
    await r.ready
    const s = r.ranks()[0]!
    expect(s.condition).toBe("known")
    expect(s.row).toMatchObject({ numRunningReqs: 0, numWaitingReqs: 0, kvCacheUsage: 0 })
  })

  it("the default live router on real vLLM /metrics routes by the policy; an explicit requiredFields still wins", async () => {
    const single = await worker({
      loads: { _tag: "file", path: payload("vllm_metrics_qwen25coder32b__production_stack_issue318.prom") }
    })
    // vLLM #48808 pasted two time points; the first (4 engines x 8 running, 0 waiting) is complete
    const pasted = readFileSync(payload("vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom"), "utf8")
    const dp4 = await worker({
      loads: { _tag: "body", body: pasted.slice(0, pasted.indexOf("# 2026-05-28 13:00:26")) }
    })
    const sources = [src(dp4, { kind: "vllm-metrics", dpSize: 4 }), src(single, { kind: "vllm-metrics" })]
    const r = live({ sources, staleAfterSeconds: 5, ageClock: "receipt" })
    await r.ready
    expect(r.ranks().map((s) => [s.condition, s.row.numRunningReqs])).toEqual([
      ["known", 8],
      ["known", 8],
      ["known", 8],
      ["known", 8],
      ["known", 0]
    ])
    const d = r.route({ requestId: "q1", inputLength: 512 })
    expect(d._tag === "Decision" && [d.mode, d.fallbackReason, d.workerUrl]).toEqual([
      "policy",
      undefined,
      single.url
    ])
    const strict = live({ sources, staleAfterSeconds: 5, requiredFields: ["numTotalTokens"] })
    await strict.ready
    expect(strict.ranks().map((s) => s.reason)).toEqual(Array(5).fill("missing-field"))
    const f = strict.route({ requestId: "q1", inputLength: 512 })
    expect(f._tag === "Decision" && [f.mode, f.fallbackReason]).toEqual(["fallback", "no-known-rank"])
  })

  it("S09 gauges declared with no samples, and an SGLang DP-8 /metrics without running counts: no zeros; only ranks with a count are known", async () => {
    const declared = [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
      "# TYPE vllm:num_requests_waiting gauge",
      "# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.",
      "# TYPE vllm:gpu_cache_usage_perc gauge",
      ""
    ].join("\n")
    const v = await worker({ loads: { _tag: "body", body: declared } })
    const g = await worker({
      loads: { _tag: "file", path: payload("sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom") }
    })
    const only = async (sources: ReadonlyArray<SourceSpec>) => {
      const r = live({ sources, staleAfterSeconds: 5 })
      await r.ready
      return r
    }
    // declared, no samples: no row at all, so the rank is unknown and the fallback decides
    const alone = await only([src(v, { kind: "vllm-metrics" })])
    expect(alone.ranks().map((s) => [s.condition, s.reason, s.row.numRunningReqs])).toEqual([
      ["unknown", "not-in-payload", undefined]
    ])
    const d = alone.route({ requestId: "x", inputLength: 1 })
    expect(d._tag === "Decision" && [d.mode, d.fallbackReason]).toEqual(["fallback", "no-known-rank"])
    expect(await alone.metrics()).toContain('loadledger_router_fallbacks_total{reason="no-known-rank"} 1')
    // the DP-8 payload has num_queue_reqs (0) for ranks 1 and 3 only and no running gauge at all: those two
    // are partial (known with their queue, running absent), the six with no count at all are unknown
    // (the old rule made all eight unknown and left routing to the fallback)
    const r = await only([src(v, { kind: "vllm-metrics" }), src(g, { kind: "sglang-metrics", dpSize: 8 })])
    const ranks = r.ranks()
    expect(ranks.length).toBe(9)
    expect(ranks.every((s) => s.row.numRunningReqs === undefined)).toBe(true)
    expect(ranks.map((s) => s.reason)).toEqual([
      "not-in-payload",
      "missing-field",
      undefined,
      "missing-field",
      undefined,
      "missing-field",
      "missing-field",
      "missing-field",
      "missing-field"
    ])
    expect([ranks[2]?.row.numWaitingReqs, ranks[2]?.missing]).toEqual([0, ["numRunningReqs"]])
    const e = r.route({ requestId: "y", inputLength: 1 })
    expect(e._tag === "Decision" && e.mode === "policy" && [2, 4].includes(e.rank)).toBe(true)
  })

  it("S04 a worker that keeps answering a frozen timestamp goes stale within the bound and gets no traffic when excluding", async () => {
    // the docs example always carries the same envelope timestamp (2024-01-15T10:30:00+00:00)
    const frozen = await worker({
      loads: { _tag: "file", path: payload("sglang_v1_loads_docs_example.json") }
    })
    const fresh = await worker({ dpSize: 1 })
    const staleMs = 800
    const r = live({
      sources: [src(frozen), src(fresh)],
      staleAfterSeconds: staleMs / 1000
    })
    await r.ready
    expect(r.ranks().map((s) => s.condition)).toEqual(["known", "known"])
    await sleep(staleMs + 200)
    expect(r.ranks().map((s) => s.reason)).toEqual(["stale", undefined])
    const p = await proxyFor(r)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(p.url, "/v1/completions", { prompt: "s" }, `fz-${i}`))
    )
    expect(replies.every((x) => x.status === 200 && x.rank === `${fresh.url}@0`)).toBe(true)
    expect(frozen.received()).toEqual([])
  })

  it("S08 one fetch for a DP-4 worker fills U@0..U@3 by dp_rank; the tokens imbalance is 3.2", async () => {
    let fetches = 0
    const body = JSON.stringify({
      loads: [
        { dp_rank: 0, num_total_tokens: 12000 },
        { dp_rank: 1, num_total_tokens: 0 },
        { dp_rank: 2, num_total_tokens: 0 },
        { dp_rank: 3, num_total_tokens: 3000 }
      ]
    })
    const server = createServer((req, res) => {
      if (req.url === "/v1/loads") fetches++
      res.writeHead(200, { "content-type": "application/json" }).end(body)
    })
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    cleanups.push(async () => {
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    })
    const port = (server.address() as { port: number }).port
    const r = live({
      sources: [
        {
          url: `http://127.0.0.1:${port}`,
          dpSize: 4,
          kind: "sglang-v1-loads",
          intervalMs: 10_000,
          timeoutMs: 500
        }
      ],
      policy: totalTokens,
      staleAfterSeconds: 5,
      ageClock: "receipt",
      requiredFields: ["numTotalTokens"]
    })
    await r.ready
    expect(fetches).toBe(1)
    const ranks = r.ranks()
    expect(ranks.map((s) => s.id)).toEqual([0, 1, 2, 3].map((i) => `http://127.0.0.1:${port}@${i}`))
    expect(ranks.map((s) => s.row.numTotalTokens)).toEqual([12000, 0, 0, 3000])
    const text = await r.metrics()
    expect(text).toContain("loadledger_router_token_imbalance_ratio 3.2")
  })

  it("S08 edge payloads: empty loads, duplicate rank and negative count leave those ranks unknown, never 0 or -1", async () => {
    const cases: ReadonlyArray<
      [string, ReadonlyArray<unknown>, ReadonlyArray<number | undefined>, ReadonlyArray<string | undefined>]
    > = [
      ["empty", [], [undefined, undefined], ["not-in-payload", "not-in-payload"]],
      [
        "duplicate",
        [
          { dp_rank: 0, num_total_tokens: 100 },
          { dp_rank: 0, num_total_tokens: 200 }
        ],
        [undefined, undefined],
        ["rejected-row", "not-in-payload"]
      ],
      [
        "negative",
        [
          { dp_rank: 0, num_total_tokens: -5 },
          { dp_rank: 1, num_total_tokens: 7 }
        ],
        [undefined, 7],
        ["rejected-row", undefined]
      ]
    ]
    for (const [, loads, tokens, reasons] of cases) {
      const w = await worker({
        loads: { _tag: "body", body: JSON.stringify({ loads }), contentType: "application/json" }
      })
      const r = live({
        sources: [src(w, { dpSize: 2, intervalMs: 10_000 })],
        policy: totalTokens,
        staleAfterSeconds: 5,
        ageClock: "receipt",
        requiredFields: ["numTotalTokens"]
      })
      await r.ready
      expect(r.ranks().map((s) => s.row.numTotalTokens)).toEqual(tokens)
      expect(r.ranks().map((s) => s.reason)).toEqual(reasons)
    }
  })

  it("LoadStat frames fill only the rank they name; stale sequence numbers are dropped", async () => {
    const w = await worker({ loads: { _tag: "hang" } })
    // a /v1/loads source publishes tokens; a frame carries none, and its rank is known anyway (partial)
    const r = live({
      sources: [src(w, { dpSize: 2, intervalMs: 10_000, timeoutMs: 50 })],
      staleAfterSeconds: 5
    })
    await r.ready // the poll timed out: both ranks unhealthy
    const stat = {
      numRunningReqs: 3,
      numWaitingReqs: 1,
      numTokens: 640,
      maxTotalNumTokens: 4096,
      attnDpRank: 1
    }
    r.ingestLoadStatFrame(w.url, encodeLoadStatFrame(5n, stat))
    expect(
      r.ranks().map((s) => [s.condition, s.row.numRunningReqs, s.row.numWaitingReqs, s.missing])
    ).toEqual([
      ["unknown", undefined, undefined, undefined],
      ["known", 3, 1, ["numTotalTokens"]]
    ])
    r.ingestLoadStatFrame(w.url, encodeLoadStatFrame(4n, { ...stat, numRunningReqs: 99 }))
    expect(r.ranks()[1]?.row.numRunningReqs).toBe(3)
    r.ingestLoadStatFrame(w.url, encodeLoadStatFrame(6n, { ...stat, numRunningReqs: 0, attnDpRank: 0 }))
    expect(r.ranks().map((s) => s.row.numRunningReqs)).toEqual([0, 3])
  })

  it("LoadStat frames into a router with an explicit requiredFields are judged by it", async () => {
    const w = await worker({ loads: { _tag: "hang" } })
    const r = live({
      sources: [src(w, { intervalMs: 10_000, timeoutMs: 50 })],
      staleAfterSeconds: 5,
      requiredFields: ["numRunningReqs", "numTotalTokens"]
    })
    await r.ready
    const stat = {
      numRunningReqs: 3,
      numWaitingReqs: 1,
      numTokens: 640,
      maxTotalNumTokens: 4096,
      attnDpRank: 0
    }
    r.ingestLoadStatFrame(w.url, encodeLoadStatFrame(1n, stat))
    expect(r.ranks().map((s) => [s.condition, s.missing])).toEqual([["unknown", ["numTotalTokens"]]])
  })

  it("garbage is a decode failure per worker: the rank is unknown and the failure is counted", async () => {
    const w = await worker({ loads: { _tag: "body", body: "<html>502 Bad Gateway</html>\u0000\u0001" } })
    const r = live({ sources: [src(w)], staleAfterSeconds: 5 })
    await r.ready
    expect(r.ranks()[0]).toMatchObject({ condition: "unknown", reason: "decode-failed" })
    const text = await r.metrics()
    expect(text).toMatch(new RegExp(`loadledger_router_decode_failures_total\\{worker="${w.url}"\\} [1-9]`))
    expect(text).toContain(`loadledger_router_rank_known{rank="${w.url}@0"} 0`)
  })

  it("a 500 and a hang both make the worker unhealthy within one poll; both recover", async () => {
    const w = await worker({ loads: { _tag: "status", status: 500 } })
    const h = await worker({ loads: { _tag: "hang" } })
    const r = live({ sources: [src(w), src(h, { timeoutMs: 100 })], staleAfterSeconds: 5 })
    const t0 = Date.now()
    await r.ready
    expect(Date.now() - t0).toBeLessThan(1000)
    expect(r.ranks().map((s) => [s.reason, s.condition])).toEqual([
      ["http-status", "unhealthy"],
      ["poll-timeout", "unhealthy"]
    ])
    const text = await r.metrics()
    expect(text).toContain(`loadledger_router_poll_failures_total{worker="${w.url}",kind="http-status"}`)
    expect(text).toContain(`loadledger_router_poll_failures_total{worker="${h.url}",kind="timeout"}`)
    w.set({ loads: { _tag: "live" } })
    h.set({ loads: { _tag: "live" } })
    await until(() => r.ranks().every((s) => s.condition === "known"), 2000)
  })
})

describe("the proxy end to end", () => {
  /** Two single-rank workers polled every 5 s (the ledger lags; the proxy learns from its own requests). */
  const slowPolledPair = async (aOptions: Omit<Parameters<typeof startFakeWorker>[0], "dpSize">) => {
    const a = await worker({ dpSize: 1, ...aOptions })
    const b = await worker({ dpSize: 1 })
    const r = live({
      sources: [src(a, { intervalMs: 5000 }), src(b, { intervalMs: 5000 })],
      staleAfterSeconds: 10
    })
    await r.ready
    return { a, b, r }
  }
  it("an X-Request-Id already in flight is a 409 (a client error), not a 503; the first request completes", async () => {
    const w = await worker({ dpSize: 1, latencyMs: 200 })
    const r = live({ sources: [src(w)], staleAfterSeconds: 5 })
    await r.ready
    const p = await proxyFor(r)
    const body = { model: "m", prompt: "hello", max_tokens: 2 }
    const first = post(p.url, "/v1/completions", body, "same")
    await until(() => r.inflight()[0] === 1, 2000)
    const second = await post(p.url, "/v1/completions", body, "same")
    expect([second.status, JSON.parse(second.body).error.reason]).toEqual([409, "DuplicateRequestId"])
    expect((await first).status).toBe(200)
  })
  it("no request lost or sent twice, streams complete, in-flight back to zero", async () => {
    const ws = await Promise.all(
      [1, 2].map(() => worker({ dpSize: 2, latencyMs: 5, chunks: 4, chunkDelayMs: 2 }))
    )
    const r = live({ sources: ws.map((w) => src(w, { dpSize: 2 })), staleAfterSeconds: 1 })
    await r.ready
    const p = await proxyFor(r)
    const n = 200
    const ids = Array.from({ length: n }, (_, i) => `req-${i}`)
    const replies: Array<Reply> = []
    const queue = [...ids]
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          const i = Number(id.slice(4))
          const chat = i % 2 === 0
          const reply = await post(
            p.url,
            chat ? "/v1/chat/completions" : "/v1/completions",
            chat
              ? {
                  model: "m",
                  messages: [{ role: "user", content: "x".repeat(40 * (i % 7)) }],
                  stream: i % 3 === 0
                }
              : { model: "m", prompt: "y".repeat(30 * (i % 5)), stream: i % 3 === 0 },
            id
          )
          replies.push(reply)
          if (i % 3 === 0) expect(reply.body.endsWith("data: [DONE]\n\n")).toBe(true)
        }
      })
    )
    expect(replies.every((x) => x.status === 200)).toBe(true)
    const received = ws.flatMap((w) => w.received().map((x) => x.requestId))
    expect(received.length).toBe(n)
    expect(new Set(received)).toEqual(new Set(ids))
    expect(r.inflight()).toEqual([0, 0, 0, 0])
    // the rank the proxy reports is the rank the worker was told
    expect(ws.flatMap((w) => w.received().map((x) => x.dpRank)).every((d) => d === 0 || d === 1)).toBe(true)
    // every rank got traffic
    expect(r.decisions().every((c) => c > 0)).toBe(true)
  })

  it("a client abort mid-stream releases the in-flight slot", async () => {
    const w = await worker({ dpSize: 1, chunks: 50, chunkDelayMs: 20 })
    const r = live({ sources: [src(w)], staleAfterSeconds: 1 })
    await r.ready
    const p = await proxyFor(r)
    const replies = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        post(p.url, "/v1/completions", { prompt: "hi", stream: true }, `ab-${i}`, {
          abortAfterFirstChunk: true
        })
      )
    )
    expect(replies.every((x) => x.status === 200)).toBe(true)
    await until(() => r.inflight()[0] === 0, 2000)
    await until(() => w.running()[0] === 0, 2000)
  })

  it("a hanging upstream completion times out with 504 and is not counted in flight afterwards", async () => {
    const w = await worker({ dpSize: 1, completions: "hang" })
    const r = live({ sources: [src(w)], staleAfterSeconds: 1 })
    await r.ready
    const p = await proxyFor(r, 300)
    const reply = await post(p.url, "/v1/completions", { prompt: "hi" }, "hang-1")
    expect(reply.status).toBe(504)
    expect(r.inflight()).toEqual([0])
  })

  it("an upstream 500 is passed through and the request is finished", async () => {
    const w = await worker({ dpSize: 1, completions: "500" })
    const r = live({ sources: [src(w)], staleAfterSeconds: 1 })
    await r.ready
    const p = await proxyFor(r)
    const reply = await post(p.url, "/v1/completions", { prompt: "hi" }, "e-1")
    expect(reply.status).toBe(500)
    expect(r.inflight()).toEqual([0])
    expect(w.received().map((x) => x.requestId)).toEqual(["e-1"])
  })

  it("a dead worker stops receiving traffic within the staleness bound and comes back after a restart", async () => {
    const a = await worker({ dpSize: 2 })
    const b = await worker({ dpSize: 2 })
    const staleMs = 300
    const r = live({
      sources: [src(a, { dpSize: 2 }), src(b, { dpSize: 2 })],
      staleAfterSeconds: staleMs / 1000
    })
    await r.ready
    const p = await proxyFor(r)
    let k = 0
    const send = async (count: number) => {
      const out: Array<Reply> = []
      for (let i = 0; i < count; i++)
        out.push(await post(p.url, "/v1/completions", { prompt: "p" }, `d-${k++}`))
      return out
    }
    // baseline: both workers take traffic (in-flight fallback is not needed, both known)
    await send(8)
    await b.stop()
    const stoppedAt = Date.now()
    await sleep(staleMs)
    const before = r.decisions().slice(2)
    const during = await send(20)
    expect(Date.now() - stoppedAt).toBeLessThan(5000)
    // nothing lost: every request answered 200 by worker a; b's ranks got no new decisions
    expect(during.every((x) => x.status === 200 && x.rank?.startsWith(a.url))).toBe(true)
    expect(r.decisions().slice(2)).toEqual(before)
    expect(
      r
        .ranks()
        .slice(2)
        .map((s) => s.condition)
    ).toEqual(["unhealthy", "unhealthy"])
    const duringIds = new Set(b.received().map((x) => x.requestId))
    await b.start()
    await until(() => r.ranks().every((s) => s.condition === "known"), 2000)
    // b's counters were reset by the restart; it is idle and takes traffic again
    const after = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(p.url, "/v1/completions", { prompt: "q" }, `back-${i}`))
    )
    expect(after.some((x) => x.rank?.startsWith(b.url))).toBe(true)
    expect(
      b
        .received()
        .filter((x) => !duringIds.has(x.requestId))
        .every((x) => x.requestId.startsWith("back-"))
    ).toBe(true)
    expect(r.inflight()).toEqual([0, 0, 0, 0])
  })

  it("a worker whose load endpoint hangs is unhealthy after one poll timeout and gets no traffic", async () => {
    const a = await worker({ dpSize: 1 })
    const h = await worker({ dpSize: 1, loads: { _tag: "hang" } })
    const r = live({ sources: [src(a), src(h, { timeoutMs: 100 })], staleAfterSeconds: 1 })
    await r.ready
    const p = await proxyFor(r)
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(p.url, "/v1/completions", { prompt: "z" }, `hung-${i}`))
    )
    expect(replies.every((x) => x.status === 200 && x.rank?.startsWith(a.url))).toBe(true)
    expect(h.received()).toEqual([])
    expect(r.inflight()).toEqual([0, 0])
  })

  it("a hang that starts later is excluded within interval + timeout, and readmitted when it answers", async () => {
    const a = await worker({ dpSize: 1 })
    const h = await worker({ dpSize: 1 })
    const intervalMs = 50
    const timeoutMs = 150
    const r = live({ sources: [src(a), src(h, { intervalMs, timeoutMs })], staleAfterSeconds: 5 })
    await r.ready
    h.set({ loads: { _tag: "hang" }, completions: "hang" })
    const t0 = performance.now()
    await until(() => r.ranks()[1]?.condition === "unhealthy", 3000)
    const excludedMs = performance.now() - t0
    // bound: interval + timeout (+ one grace when the timer fires late + scheduling slack on a shared machine)
    expect(excludedMs).toBeLessThan(intervalMs + timeoutMs + 100 + 250)
    h.set({ loads: { _tag: "live" }, completions: "ok" })
    const t1 = performance.now()
    await until(() => r.ranks()[1]?.condition === "known", 3000)
    expect(performance.now() - t1).toBeLessThan(intervalMs + timeoutMs + 100 + 250)
  })

  it("a request that reached an engine is never sent again: the engine dies mid-request, the client gets 502", async () => {
    const { a, b, r } = await slowPolledPair({ completions: "hang" })
    // both idle: SGLang's total-requests takes the lowest rank, a
    const p = await proxyFor(r)
    const pending = post(p.url, "/v1/completions", { prompt: "once" }, "once-1")
    await until(() => a.received().length === 1, 2000)
    await a.stop()
    const reply = await pending
    expect(reply.status).toBe(502)
    expect(a.received().map((x) => x.requestId)).toEqual(["once-1"])
    expect(b.received()).toEqual([])
    expect(r.inflight()).toEqual([0, 0])
    expect(await r.metrics()).not.toMatch(/loadledger_router_retries_total\{[^}]*\} [1-9]/)
  })

  it("a stream that pauses longer than the idle timeout is cut and released; a slower first byte is not", async () => {
    const w = await worker({ dpSize: 1, latencyMs: 300, chunks: 3, chunkDelayMs: 400 })
    const r = live({ sources: [src(w)], staleAfterSeconds: 5 })
    await r.ready
    const p = await proxyFor(r, 2000, 150)
    const reply = await post(p.url, "/v1/completions", { prompt: "slow", stream: true }, "idle-1").catch(
      (e: Error) => ({ status: -1, body: e.message, rank: undefined })
    )
    // headers came after 300 ms (under the 2 s first-byte bound); the 400 ms pause then cut the stream
    expect(reply.body.includes("[DONE]")).toBe(false)
    await until(() => r.inflight()[0] === 0, 2000)
  })

  it("a large payload is decoded off the routing thread: the event loop keeps turning while it decodes", async () => {
    const w = await worker({ dpSize: 2, loads: { _tag: "hang" } })
    const r = live({
      sources: [src(w, { dpSize: 2, intervalMs: 60_000, timeoutMs: 50 })],
      staleAfterSeconds: 60,
      decodeBudgetMs: 60_000
    })
    await r.ready
    const body = nestedLoadsPayload(2, 60_000, 50)
    let turns = 0
    let spinning = true
    const spin = () => {
      turns++
      if (spinning) setImmediate(spin)
    }
    spin()
    const started = performance.now()
    await r.ingest(w.url, body, "v1-loads")
    spinning = false
    const ms = performance.now() - started
    expect(r.ranks().map((s) => s.condition)).toEqual(["known", "known"])
    // a decode on this thread would have allowed no turn at all while it ran
    expect(turns).toBeGreaterThan(10)
    expect(ms).toBeGreaterThan(0)
  })

  it("an engine whose completions fail while its load endpoint answers is ejected after 3 failures, then readmitted by its next healthy poll", async () => {
    const bad = await worker({ dpSize: 1, completions: "500" })
    const good = await worker({ dpSize: 1 })
    // the bad engine is polled once a second: the ejection holds until that poll, not for the minute
    const r = live({ sources: [src(bad, { intervalMs: 1000 }), src(good)], staleAfterSeconds: 5 })
    await r.ready
    const p = await startProxy({ router: r, ejectAfterFailures: 3, ejectForMs: 60_000 })
    cleanups.push(() => p.close())
    const statuses: Array<number> = []
    for (let i = 0; i < 8; i++)
      statuses.push((await post(p.url, "/v1/completions", { prompt: "x" }, `ej-${i}`)).status)
    // the policy alternates while both are idle: 3 failures on the bad engine, then only the good one
    expect(bad.received().length).toBe(3)
    expect(statuses.filter((x) => x === 500).length).toBe(3)
    expect(r.ranks()[0]).toMatchObject({ condition: "unhealthy", reason: "ejected" })
    expect(await r.metrics()).toContain(`loadledger_router_ejections_total{worker="${bad.url}"} 1`)
    bad.set({ completions: "ok" })
    // the state law: the first healthy report after the ejection clears it (sgl-project/sglang #31206)
    const t0 = performance.now()
    await until(() => r.ranks()[0]?.condition === "known", 3000)
    expect(performance.now() - t0).toBeLessThan(1000 + 500)
    expect(r.inflight()).toEqual([0, 0])
  })

  it("requests sent right after a worker dies are re-placed, not lost (connection refused is safe to retry)", async () => {
    const { a, b, r } = await slowPolledPair({})
    const p = await proxyFor(r)
    await b.stop()
    // the ledger still says b is fine (next poll in 5 s): the proxy learns from the refused connection
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(p.url, "/v1/completions", { prompt: "z" }, `rt-${i}`))
    )
    expect(replies.map((x) => x.status)).toEqual(Array.from({ length: 10 }, () => 200))
    expect(
      a
        .received()
        .map((x) => x.requestId)
        .sort()
    ).toEqual(Array.from({ length: 10 }, (_, i) => `rt-${i}`).sort())
    expect(r.inflight()).toEqual([0, 0])
    // every refused request was placed once more, and counted
    expect(await r.metrics()).toMatch(/loadledger_router_retries_total\{reason="ECONNREFUSED"\} [1-9]/)
  })
})

describe("a worker URL with a base path", () => {
  it("requests are forwarded under it, as its load endpoint is polled (was: the base path dropped)", async () => {
    const seen: Array<string> = []
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`)
      if (req.method === "GET" && req.url === "/base/v1/loads") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(
          JSON.stringify({
            loads: [{ dp_rank: 0, num_running_reqs: 0, num_waiting_reqs: 0, num_total_tokens: 0 }]
          })
        )
        return
      }
      req.resume()
      req.on("end", () => {
        res.writeHead(req.url?.startsWith("/base/v1/completions") === true ? 200 : 404, {
          "content-type": "application/json"
        })
        res.end("{}")
      })
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())))
    const { port } = server.address() as AddressInfo
    const router = live({
      sources: [
        {
          url: `http://127.0.0.1:${port}/base/`,
          dpSize: 1,
          kind: "sglang-v1-loads",
          intervalMs: 50,
          timeoutMs: 150
        }
      ],
      staleAfterSeconds: 5
    })
    await until(() => seen.includes("GET /base/v1/loads"), 2000)
    const p = await proxyFor(router)
    const reply = await post(p.url, "/v1/completions", { prompt: "hi" }, "base-1")
    expect(reply.status).toBe(200)
    expect(seen).toContain("POST /base/v1/completions")
    // and with its query string (was dropped; third trial)
    expect((await post(p.url, "/v1/completions?foo=1&bar=2", { prompt: "hi" }, "base-2")).status).toBe(200)
    expect(seen).toContain("POST /base/v1/completions?foo=1&bar=2")
  })
})
