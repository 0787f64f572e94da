/**
 * What the router is built with is checked up front: a bad policy, worker, source or option is a
 * `RouterError` `InvalidInput` naming the field, never a `TypeError` from deep inside, a value
 * rounded or read as a default, or an error that names something else. The cases a fresh user met
 * through the public API, then properties over arbitrary values for every entry point that takes
 * options or worker lists (`makeRouter`, `makeLastHeard`, `rankStatus`, `startLiveRouter`,
 * `startProxy`).
 */
import { findPolicy, totalRequests, totalTokens } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  ejectWorker,
  finish,
  makeLastHeard,
  makeRouter,
  type RouterError,
  type RouterOptions,
  rankStatus,
  recordRows,
  route,
  type SourceSpec,
  startLiveRouter,
  startProxy,
  statuses,
  type WorkerSpec
} from "../src/index.js"

const req = { requestId: "a", inputLength: 100 }
const refusal = (field: string, message?: string) => ({
  _tag: "RouterError",
  reason: "InvalidInput",
  field,
  ...(message === undefined ? {} : { message })
})
const rows = (n: number): ReadonlyArray<RankLoad> =>
  Array.from({ length: n }, (_, dpRank) => ({
    dpRank,
    numRunningReqs: dpRank,
    numWaitingReqs: 0,
    numTotalTokens: 0
  }))
// a worker or an option a JavaScript caller (a config file) may hand over, whatever its declared type
const loose = (x: unknown): never => x as never
const source = (url: string, o: Partial<SourceSpec> = {}): SourceSpec => ({
  url,
  dpSize: 2,
  kind: "sglang-v1-loads",
  intervalMs: 50,
  timeoutMs: 50,
  ...o
})
// nothing listens on port 9 (discard): polls there fail at once
const closed = "http://127.0.0.1:9"

describe("makeRouter refuses what a fresh user passed, naming the field; route answers it", () => {
  const build = (
    options: Partial<RouterOptions>,
    workers: ReadonlyArray<WorkerSpec> = [{ url: "u", dpSize: 4 }]
  ) => makeRouter(totalRequests, workers, { staleAfterSeconds: 1, ...options })

  it("clientCount 0 and NaN: options.clientCount, not a TypeError reading 'condition'", () => {
    for (const [clientCount, shown] of [
      [0, "0"],
      [Number.NaN, "NaN"]
    ] as const) {
      const r = build({ clientCount })
      const expected = refusal(
        "options.clientCount",
        `options.clientCount must be an integer >= 1, got ${shown}`
      )
      expect(r.error).toEqual(expected)
      expect(route(r, req, 0)).toEqual(expected)
      expect(statuses(r, 0)).toEqual([])
    }
  })

  it("clientIndex 5 of clientCount 2: options.clientIndex", () => {
    const r = build({ clientCount: 2, clientIndex: 5 })
    expect(route(r, req, 0)).toEqual(
      refusal("options.clientIndex", "options.clientIndex must be an integer in 0..1, got 5")
    )
    // the last index of the count is accepted: the fallback starts at floor(4 * 1 / 2)
    const ok = route(build({ clientCount: 2, clientIndex: 1 }), req, 0)
    expect(ok._tag === "Routed" && ok.decision.rank).toBe(2)
  })

  it("staleAfterSeconds NaN and -1: options.staleAfterSeconds (NaN used to keep a rank known 1,000 s on)", () => {
    for (const [staleAfterSeconds, shown] of [
      [Number.NaN, "NaN"],
      [-1, "-1"],
      [0, "0"],
      [Number.POSITIVE_INFINITY, "Infinity"]
    ] as const) {
      let r = build({ staleAfterSeconds })
      r = applyPoll(r, "u", Result.succeed(rows(4)), 0)
      expect(route(r, req, 1000)).toEqual(
        refusal(
          "options.staleAfterSeconds",
          `options.staleAfterSeconds must be a finite number of seconds > 0, got ${shown}`
        )
      )
      expect(statuses(r, 1000)).toEqual([])
    }
    // the accepted bound: known right after the poll, stale 1,000 s later
    const fine = applyPoll(build({ staleAfterSeconds: 1 }), "u", Result.succeed(rows(4)), 0)
    expect(statuses(fine, 0.5).map((s) => s.condition)).toEqual(["known", "known", "known", "known"])
    expect(statuses(fine, 1000).map((s) => s.reason)).toEqual(["stale", "stale", "stale", "stale"])
  })

  it("dpSize 2.5, 0, -1, 1025: workers[i].dpSize, never 2 ranks or 'every worker failed its last poll'", () => {
    for (const dpSize of [2.5, 0, -1, 1025, Number.POSITIVE_INFINITY]) {
      const r = build({}, [
        { url: "a", dpSize: 1 },
        { url: "b", dpSize }
      ])
      const out = route(r, req, 0)
      expect(out).toEqual(
        refusal("workers[1].dpSize", `workers[1].dpSize must be an integer from 1 to 1024, got ${dpSize}`)
      )
      expect(out._tag === "RouterError" && out.message).not.toContain("every worker failed")
    }
    expect(statuses(build({}, [{ url: "a", dpSize: 1024 }]), 0).length).toBe(1024)
  })

  it("duplicate worker URLs (trailing slashes dropped): workers[1].url", () => {
    for (const second of ["http://h:8000", "http://h:8000/"]) {
      const r = build({}, [
        { url: "http://h:8000", dpSize: 2 },
        { url: second, dpSize: 2 }
      ])
      expect(route(r, req, 0)).toEqual(
        refusal(
          "workers[1].url",
          `workers[1].url must be a URL no other entry has (workers[0] has it), got "${second}"`
        )
      )
    }
  })

  it("a bad kind, requiredFields, ageClock, policy or options object names that field", () => {
    const u = [{ url: "u", dpSize: 1 }]
    const stale = { staleAfterSeconds: 1 }
    // field, then makeRouter's three arguments
    const cases: ReadonlyArray<readonly [string, unknown, unknown, unknown]> = [
      ["workers[0].kind", totalRequests, [{ url: "u", dpSize: 1, kind: "nope" }], stale],
      ["workers[0].url", totalRequests, [{ url: "", dpSize: 1 }], stale],
      ["workers[0]", totalRequests, [null], stale],
      ["workers", totalRequests, "u", stale],
      [
        "options.requiredFields[1]",
        totalRequests,
        u,
        { ...stale, requiredFields: ["numRunningReqs", "tokens"] }
      ],
      ["options.requiredFields", totalRequests, u, { ...stale, requiredFields: "numRunningReqs" }],
      ["options.ageClock", totalRequests, u, { ...stale, ageClock: "wall" }],
      ["options.staleAfterSeconds", totalRequests, u, { staleAfterMs: 1000 }],
      ["options", totalRequests, u, undefined],
      ["policy", undefined, u, stale],
      ["policy.route", { ...totalRequests, route: 1 }, u, stale]
    ]
    for (const [field, policy, workers, options] of cases) {
      const r = makeRouter(loose(policy), loose(workers), loose(options))
      expect(r.error).toMatchObject(refusal(field))
      expect(r.error?.message.startsWith(`${field} must be `)).toBe(true)
      expect(route(r, req, 0)).toBe(r.error)
    }
  })

  it("a refused router takes polls, finishes and ejections without throwing, and stays refused", () => {
    let r = build({ clientCount: 0 })
    r = applyPoll(r, "u", Result.succeed(rows(4)), 0)
    r = ejectWorker(r, "u", 1, "x", 0)
    expect(finish(r, "a", 0).found).toBe(false)
    expect(route(r, req, 1)).toMatchObject(refusal("options.clientCount"))
  })

  it("valid options are unchanged: no error, and a router over no workers says it has none", () => {
    const r = build({
      clientCount: 3,
      clientIndex: 2,
      requiredFields: ["numTotalTokens"],
      ageClock: "receipt"
    })
    expect(r.error).toBeUndefined()
    expect("error" in r).toBe(false)
    expect(route(makeRouter(totalRequests, [], { staleAfterSeconds: 1 }), req, 0)).toMatchObject({
      reason: "NoAvailableRanks",
      message: "no rank: the router has no workers"
    })
  })
})

describe("the other entry points that take workers or options", () => {
  it("makeLastHeard refuses a bad worker list with an empty ledger naming the field, and the ledger keeps it", () => {
    const l = makeLastHeard([
      { url: "u", dpSize: 2 },
      { url: "v", dpSize: 2.5 }
    ])
    expect(l).toEqual({
      workers: [],
      ranks: [],
      error: refusal("workers[1].dpSize", "workers[1].dpSize must be an integer from 1 to 1024, got 2.5")
    })
    expect(recordRows(l, "u", rows(2), 1).error?.field).toBe("workers[1].dpSize")
    expect(makeLastHeard([{ url: "u", dpSize: 2 }]).ranks.length).toBe(2)
  })

  it("rankStatus with refused options judges no rank: every one unknown(invalid-options), the message naming the field", () => {
    const l = recordRows(makeLastHeard([{ url: "u", dpSize: 2 }]), "u", rows(2), 0)
    const cases = [
      [{ staleAfterSeconds: -1, ageClock: "receipt" }, "options.staleAfterSeconds"],
      [{ staleAfterSeconds: 1, ageClock: "wall" }, "options.ageClock"],
      [{ staleAfterSeconds: 1, ageClock: "receipt", requiredFields: ["x"] }, "options.requiredFields[0]"],
      [
        { staleAfterSeconds: 1, ageClock: "receipt", publishedFieldsByWorker: { u: [] } },
        "options.publishedFieldsByWorker"
      ],
      [
        { staleAfterSeconds: 1, ageClock: "receipt", publishedFieldsByWorker: new Map([["u", 3]]) },
        "options.publishedFieldsByWorker"
      ],
      [null, "options"]
    ] as const
    for (const [options, field] of cases) {
      const s = rankStatus(l, 0.5, loose(options))
      expect(s.map((x) => [x.condition, x.reason])).toEqual([
        ["unknown", "invalid-options"],
        ["unknown", "invalid-options"]
      ])
      expect(s[0]?.row.unknown?.reason).toBe("not-reported")
      expect(s[0]?.row.unknown?.message.startsWith(`${field} must be `)).toBe(true)
    }
    expect(rankStatus(l, 0.5, { staleAfterSeconds: 1, ageClock: "receipt" }).map((x) => x.condition)).toEqual(
      ["known", "known"]
    )
  })

  it("startLiveRouter with kind 'nope': sources[0].kind, not a TypeError reading 'published'; nothing starts", async () => {
    const r = startLiveRouter({
      sources: [source(closed, { kind: loose("nope") })],
      policy: totalRequests,
      staleAfterSeconds: 1
    })
    const expected = refusal(
      "sources[0].kind",
      'sources[0].kind must be one of sglang-v1-loads, sglang-get-load, sglang-metrics, vllm-metrics, trtllm-iteration-stats, trtllm-metrics, got "nope"'
    )
    expect(r.error).toEqual(expected)
    expect(r.route(req)).toEqual(expected)
    await r.ready
    expect([r.ranks(), r.inflight(), r.decisions()]).toEqual([[], [], []])
    expect(r.finish("a")).toBe(false)
    expect(await r.metrics()).toContain("loadledger_router_decisions_total")
    await r.close()
  })

  it("startLiveRouter names the field without a prefix for each of the user's cases and the shell's options", async () => {
    const base = {
      sources: [source(`${closed}/a`), source(`${closed}/b`)],
      policy: totalRequests,
      staleAfterSeconds: 1
    }
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["clientCount", { clientCount: 0 }],
      ["clientCount", { clientCount: Number.NaN }],
      ["clientIndex", { clientCount: 2, clientIndex: 5 }],
      ["staleAfterSeconds", { staleAfterSeconds: Number.NaN }],
      ["staleAfterSeconds", { staleAfterSeconds: -1 }],
      ["sources[1].dpSize", { sources: [source(`${closed}/a`), source(`${closed}/b`, { dpSize: 2.5 })] }],
      ["sources[0].dpSize", { sources: [source(closed, { dpSize: 0 })] }],
      ["sources[1].url", { sources: [source(closed), source(`${closed}/`)] }],
      ["sources[0].url", { sources: [source("u")] }],
      ["sources[0].url", { sources: [source("http://h:1/?x=1")] }],
      ["sources[0].intervalMs", { sources: [source(closed, { intervalMs: 0 })] }],
      ["sources[0].timeoutMs", { sources: [source(closed, { timeoutMs: 2 ** 31 })] }],
      ["sources[0].path", { sources: [source(closed, { path: "metrics" })] }],
      ["sources", { sources: undefined }],
      ["policy", { policy: "total-requests" }],
      ["clock", { clock: 5 }],
      ["decodeBudgetMs", { decodeBudgetMs: Number.NaN }],
      ["inThreadDecodeMaxBytes", { inThreadDecodeMaxBytes: -1 }],
      ["maxPollBytes", { maxPollBytes: 0 }],
      ["processMetrics", { processMetrics: "yes" }]
    ]
    for (const [field, change] of cases) {
      const r = startLiveRouter(loose({ ...base, ...change }))
      expect(r.error, field).toMatchObject(refusal(field))
      expect(r.error?.message.startsWith(`${field} must be `)).toBe(true)
      expect(r.route(req)).toBe(r.error)
      await r.close()
    }
    const fine = startLiveRouter(base)
    expect(fine.error).toBeUndefined()
    expect(fine.ranks().length).toBe(4)
    await fine.close()
  })

  it("startProxy rejects a bad option with the error naming it, and a refused router with the router's error", async () => {
    const router = startLiveRouter({ sources: [], policy: totalRequests, staleAfterSeconds: 1 })
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["port", { port: 70000 }],
      ["port", { port: 1.5 }],
      ["host", { host: "" }],
      ["connectTimeoutMs", { connectTimeoutMs: Number.NaN }],
      ["firstByteTimeoutMs", { firstByteTimeoutMs: 0 }],
      ["idleStreamTimeoutMs", { idleStreamTimeoutMs: -5 }],
      ["ejectAfterFailures", { ejectAfterFailures: 0 }],
      ["ejectForMs", { ejectForMs: Number.NaN }],
      ["maxBodyBytes", { maxBodyBytes: 2.5 }],
      ["router", { router: undefined }],
      ["router.route", { router: { ...router, route: undefined } }]
    ]
    for (const [field, change] of cases) {
      const out = await startProxy(loose({ router, ...change })).then(
        (p) => p.close().then(() => "started"),
        (e: unknown) => e
      )
      expect(out, field).toMatchObject(refusal(field))
    }
    const refused = startLiveRouter({
      sources: [source(closed, { dpSize: 0 })],
      policy: totalRequests,
      staleAfterSeconds: 1
    })
    await expect(startProxy({ router: refused })).rejects.toBe(refused.error)
    const proxy = await startProxy({ router, ejectForMs: Number.POSITIVE_INFINITY })
    expect(proxy.port).toBeGreaterThan(0)
    await proxy.close()
    await router.close()
  })
})

// ---- properties: arbitrary values in every field; nothing throws, a refusal names a field at fault ----

/** A value with the paths of the fields drawn from junk (a refusal must name one of them). */
interface Drawn<T> {
  readonly value: T
  readonly junk: ReadonlyArray<string>
}
const junk = fc.oneof(
  fc.anything(),
  fc.constantFrom<unknown>(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -1,
    0,
    2.5,
    2 ** 31,
    1e12,
    "",
    "nope",
    null,
    [],
    {}
  )
)
/** The valid arbitrary, or one time in ten a junk value recorded under `path`. */
const field = (path: string, valid: fc.Arbitrary<unknown>, junkValues = junk): fc.Arbitrary<Drawn<unknown>> =>
  fc.oneof(
    { arbitrary: valid.map((value) => ({ value, junk: [] })), weight: 9 },
    { arbitrary: junkValues.map((value) => ({ value, junk: [path] })), weight: 1 }
  )
/** An object of drawn fields (an absent value stays a present key with `undefined`). */
const object = (
  path: string,
  fields: Record<string, (prefix: string) => fc.Arbitrary<Drawn<unknown>>>
): fc.Arbitrary<Drawn<Record<string, unknown>>> => {
  const prefix = path === "" ? "" : `${path}.`
  const drawn = fc.record(Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f(`${prefix}${k}`)])))
  return drawn.map((d) => ({
    value: Object.fromEntries(Object.entries(d).map(([k, x]) => [k, x.value])),
    junk: Object.values(d).flatMap((x) => x.junk)
  }))
}
const optional = (a: fc.Arbitrary<unknown>) => fc.option(a, { nil: undefined })
const policies = fc.constantFrom<unknown>(
  totalRequests,
  totalTokens,
  findPolicy("vllm-kv-pressure")!.make({})
)
const kinds = fc.constantFrom("sglang-v1-loads", "sglang-get-load", "sglang-metrics", "vllm-metrics")
const judging = {
  staleAfterSeconds: (p: string) => field(p, fc.double({ min: 0.001, max: 1e6, noNaN: true })),
  requiredFields: (p: string) =>
    field(p, optional(fc.subarray(["numRunningReqs", "numWaitingReqs", "numTotalTokens", "kvCacheUsage"]))),
  ageClock: (p: string) => field(p, optional(fc.constantFrom("publisher-change", "receipt"))),
  // valid: both absent, or a count with index 0, so one junk value alone decides which field is at fault
  clientCount: (p: string) => field(p, optional(fc.integer({ min: 1, max: 4 }))),
  clientIndex: (p: string) => field(p, optional(fc.constant(0)))
}
/** `n` workers (or sources) with distinct URLs `${base}/w${i}`, the whole list sometimes junk. */
const list = (
  path: string,
  entry: (url: string, prefix: string) => fc.Arbitrary<Drawn<Record<string, unknown>>>
): fc.Arbitrary<Drawn<unknown>> =>
  fc.oneof(
    {
      weight: 9,
      arbitrary: fc
        .integer({ min: 0, max: 3 })
        .chain((n) =>
          fc.tuple(...Array.from({ length: n }, (_, i) => entry(`${closed}/w${i}`, `${path}[${i}]`)))
        )
        .map((ws) => ({ value: ws.map((w) => w.value), junk: ws.flatMap((w) => w.junk) }))
    },
    { weight: 1, arbitrary: junk.map((value) => ({ value, junk: [path] })) }
  )
const worker = (url: string, path: string) =>
  object(path, {
    url: (p) => field(p, fc.constant(url)),
    dpSize: (p) => field(p, fc.integer({ min: 1, max: 4 })),
    kind: (p) => field(p, optional(kinds))
  })
const sourceEntry = (url: string, path: string) =>
  object(path, {
    url: (p) => field(p, fc.constant(url)),
    dpSize: (p) => field(p, fc.integer({ min: 1, max: 4 })),
    kind: (p) => field(p, kinds),
    intervalMs: (p) => field(p, fc.integer({ min: 20, max: 200 })),
    timeoutMs: (p) => field(p, fc.integer({ min: 20, max: 200 })),
    path: (p) => field(p, optional(fc.constant("/v1/loads")))
  })
/** Sometimes the whole object is junk. */
const orJunk = (path: string, a: fc.Arbitrary<Drawn<unknown>>): fc.Arbitrary<Drawn<unknown>> =>
  fc.oneof(
    { weight: 9, arbitrary: a },
    { weight: 1, arbitrary: junk.map((value) => ({ value, junk: [path] })) }
  )

/**
 * `error` names one of the junk paths (or a field inside one; `""`: the whole argument of a
 * one-argument entry point was junk, any field may be at fault), and its message starts with it.
 */
const namesJunk = (error: RouterError, junkPaths: ReadonlyArray<string>) => {
  expect(error).toMatchObject({ _tag: "RouterError", reason: "InvalidInput" })
  const f = error.field ?? ""
  expect(error.message.startsWith(`${f} must be `)).toBe(true)
  expect(junkPaths.some((p) => p === "" || f === p || f.startsWith(`${p}.`) || f.startsWith(`${p}[`))).toBe(
    true
  )
}
const dpSizes = (ws: unknown): number => (ws as ReadonlyArray<WorkerSpec>).reduce((a, w) => a + w.dpSize, 0)

describe("properties: no public entry point throws over arbitrary option values", () => {
  it("makeRouter, and route / applyPoll / statuses / finish / ejectWorker on what it returns", () => {
    const args = fc.record({
      policy: field("policy", policies),
      workers: list("workers", worker),
      options: orJunk("options", object("options", judging))
    })
    fc.assert(
      fc.property(args, ({ policy, workers, options }) => {
        const junkPaths = [...policy.junk, ...workers.junk, ...options.junk]
        let r = makeRouter(loose(policy.value), loose(workers.value), loose(options.value))
        if (junkPaths.length === 0) expect(r.error).toBeUndefined()
        if (r.error !== undefined) {
          namesJunk(r.error, junkPaths)
          expect(route(r, req, 0)).toBe(r.error)
          expect(statuses(r, 0)).toEqual([])
        }
        const ws = r.error === undefined ? (workers.value as ReadonlyArray<WorkerSpec>) : []
        expect(statuses(r, 0).length).toBe(dpSizes(ws))
        for (const w of ws) r = applyPoll(r, w.url, Result.succeed(rows(w.dpSize)), 0)
        const out = route(r, req, 0.1)
        if (r.error === undefined)
          expect(out._tag === "Routed" ? "Routed" : out.reason).toBe(
            ws.length > 0 ? "Routed" : "NoAvailableRanks"
          )
        if (out._tag === "Routed") r = finish(out.state, "a", 0.2).state
        if (ws[0] !== undefined) r = ejectWorker(r, ws[0].url, 1, "x", 0.3)
        statuses(r, 0.4)
      }),
      { numRuns: 400 }
    )
  })

  it("makeLastHeard and rankStatus", () => {
    const args = fc.record({
      workers: list("workers", worker),
      options: orJunk(
        "options",
        object("options", {
          staleAfterSeconds: judging.staleAfterSeconds,
          requiredFields: judging.requiredFields,
          ageClock: judging.ageClock,
          publishedFieldsByWorker: (p) =>
            field(p, optional(fc.constant(new Map([[`${closed}/w0`, ["numRunningReqs", "numWaitingReqs"]]]))))
        })
      )
    })
    fc.assert(
      fc.property(args, ({ workers, options }) => {
        let l = makeLastHeard(loose(workers.value))
        if (workers.junk.length === 0) expect(l.error).toBeUndefined()
        if (l.error !== undefined) namesJunk(l.error, workers.junk)
        else expect(l.ranks.length).toBe(dpSizes(workers.value))
        for (const w of l.workers) l = recordRows(l, w.url, rows(w.dpSize), 0)
        const s = rankStatus(l, 0.5, loose(options.value))
        expect(s.length).toBe(l.ranks.length)
        const refused = s.filter((x) => x.reason === "invalid-options")
        if (options.junk.length === 0) expect(refused).toEqual([])
        expect(refused.length === 0 || refused.length === s.length).toBe(true)
        for (const x of refused) {
          const message = x.row.unknown?.message ?? ""
          expect(options.junk.some((p) => message.startsWith(p))).toBe(true)
        }
      }),
      { numRuns: 400 }
    )
  })

  it("startLiveRouter, its calls, ready and close", async () => {
    let accepted = 0
    const args = orJunk(
      "",
      object("", {
        policy: (p) => field(p, policies),
        sources: () => list("sources", sourceEntry),
        ...judging,
        clock: (p) => field(p, optional(fc.constant(() => performance.now() / 1000))),
        decodeBudgetMs: (p) => field(p, optional(fc.integer({ min: 1, max: 5000 }))),
        inThreadDecodeMaxBytes: (p) => field(p, optional(fc.integer({ min: 0, max: 1 << 20 }))),
        maxPollBytes: (p) => field(p, optional(fc.integer({ min: 1, max: 1 << 22 }))),
        processMetrics: (p) => field(p, optional(fc.boolean()))
      })
    )
    await fc.assert(
      fc.asyncProperty(args, async (config) => {
        const r = startLiveRouter(loose(config.value))
        try {
          if (config.junk.length === 0) expect(r.error).toBeUndefined()
          const out = r.route(req)
          if (r.error !== undefined) {
            namesJunk(r.error, config.junk)
            expect(out).toBe(r.error)
            expect(r.ranks()).toEqual([])
            await r.ready
          } else {
            const sources = (config.value as { sources: ReadonlyArray<SourceSpec> }).sources
            expect(r.ranks().length).toBe(dpSizes(sources))
            expect(out._tag).toBe(sources.length > 0 ? "Decision" : "RouterError")
            accepted++
          }
          r.finish("a")
          r.markUnreachable(`${closed}/w0`, "x")
          r.eject(`${closed}/w0`, 10, "x")
          r.ingestLoadStatFrame(`${closed}/w0`, [])
          await r.ingest(`${closed}/w0`, "{}")
          await r.metrics()
        } finally {
          await r.close()
        }
      }),
      { numRuns: 150 }
    )
    // the property also ran routers it accepted (about one draw in eight), polling a closed port
    expect(accepted).toBeGreaterThan(4)
  })

  it("startProxy: a refusal is a RouterError naming the option, before anything listens", async () => {
    const router = startLiveRouter({ sources: [], policy: totalRequests, staleAfterSeconds: 1 })
    const ms = (p: string) => field(p, optional(fc.integer({ min: 1, max: 300_000 })))
    // never a junk value that would bind a real port or resolve a host name
    const notAPort = junk.filter(
      (x) => !(Number.isSafeInteger(x) && (x as number) > 0 && (x as number) <= 65535)
    )
    const notAHost = junk.filter((x) => typeof x !== "string" || x === "")
    const args = orJunk(
      "",
      object("", {
        router: (p) => field(p, fc.constant(router)),
        port: (p) => field(p, optional(fc.constant(0)), notAPort),
        host: (p) => field(p, optional(fc.constant("127.0.0.1")), notAHost),
        connectTimeoutMs: ms,
        firstByteTimeoutMs: ms,
        idleStreamTimeoutMs: ms,
        ejectAfterFailures: (p) => field(p, optional(fc.integer({ min: 1, max: 10 }))),
        ejectForMs: (p) => field(p, optional(fc.integer({ min: 0, max: 60_000 }))),
        maxBodyBytes: (p) => field(p, optional(fc.integer({ min: 1, max: 1 << 25 })))
      })
    )
    await fc.assert(
      fc.asyncProperty(args, async (options) => {
        const out = await startProxy(loose(options.value)).then(
          async (p) => {
            await p.close()
            return undefined
          },
          (e: RouterError) => e
        )
        if (options.junk.length === 0) expect(out).toBeUndefined()
        if (out !== undefined) namesJunk(out, options.junk)
      }),
      { numRuns: 60 }
    )
    await router.close()
  })
})
