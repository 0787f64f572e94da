import { totalRequests, totalTokens } from "@loadledger/policies"
import { HashMap, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  type Decision,
  finish,
  type LedgerRow,
  makeLedger,
  makeRouter,
  makeRouterMetrics,
  observedImbalance,
  type PollFailure,
  type RouterState,
  rankId,
  rankStatus,
  recordFailure,
  recordRows,
  route,
  sourceDecodeKind,
  sourceUrl,
  statuses,
  tokenImbalanceRatio
} from "../src/index.js"

const ok = (rows: ReadonlyArray<LedgerRow>) => Result.succeed(rows)
const failed = (kind: PollFailure["kind"]) =>
  Result.fail<PollFailure>({ _tag: "PollFailure", kind, message: kind })

const placed = <S>(r: ReturnType<typeof route<S>>): { state: RouterState<S>; decision: Decision } => {
  if (r._tag === "RouterError") throw new Error(`expected a placement, got ${r.reason}: ${r.message}`)
  return r
}

describe("docstring examples", () => {
  it("makeLedger names virtual workers url@rank", () => {
    const l = makeLedger([{ url: "http://127.0.0.1:30000", dpSize: 2 }])
    expect(l.ranks.map((r) => r.id)).toEqual(["http://127.0.0.1:30000@0", "http://127.0.0.1:30000@1"])
  })
  it("rankStatus: age and not-in-payload", () => {
    let l = makeLedger([{ url: "u", dpSize: 2 }])
    l = recordRows(l, "u", [{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 10 }], 5)
    const s = rankStatus(l, 6, {
      staleAfterSeconds: 2,
      requiredFields: ["numRunningReqs"],
      ageClock: "receipt"
    })
    expect(s[0]?.known).toBe(true)
    expect(s[0]?.ageSeconds).toBe(1)
    expect(s[1]?.known).toBe(false)
    expect(s[1]?.reason).toBe("not-in-payload")
  })
  it("tokenImbalanceRatio is max over mean", () => {
    // S08's payload: 12000, 0, 0, 3000 -> mean 3750, max 12000
    expect(tokenImbalanceRatio([12000, 0, 0, 3000])).toBe(3.2)
    expect(tokenImbalanceRatio([0, 0])).toBe(1)
    expect(tokenImbalanceRatio([])).toBeUndefined()
  })
  it("sourceUrl appends the endpoint path", () => {
    expect(
      sourceUrl({
        url: "http://127.0.0.1:30000/",
        dpSize: 2,
        kind: "sglang-v1-loads",
        intervalMs: 100,
        timeoutMs: 50
      })
    ).toBe("http://127.0.0.1:30000/v1/loads")
    expect(
      sourceUrl({ url: "http://h:1", dpSize: 1, kind: "vllm-metrics", intervalMs: 1, timeoutMs: 1 })
    ).toBe("http://h:1/metrics")
  })
  it("makeRouterMetrics counts decisions", async () => {
    const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
    m.decision("http://127.0.0.1:30000@0", "policy")
    const text = await m.registry.metrics()
    expect(text).toContain(
      'loadledger_router_decisions_total{rank="http://127.0.0.1:30000@0",mode="policy"} 1'
    )
  })
})

describe("fault cases", () => {
  it("S01 start-up burst before any snapshot is spread 8/8/8/8, not all on rank 0", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1 })
    for (let i = 0; i < 32; i++)
      r = placed(route(r, { requestId: `q${i}`, inputLength: 100 }, i * 0.0015)).state
    expect(r.inflightPerRank).toEqual([8, 8, 8, 8])
  })

  it("S04 a frozen publisher timestamp is flagged stale from t = 2 s on; fresh snapshots never", () => {
    // interval 100 ms, bound 1 s (10 x interval); frozen: every snapshot (w0, r0) with timestamp 0.
    const opts = { staleAfterSeconds: 1, requiredFields: ["numRunningReqs", "numWaitingReqs"] as const }
    let frozen = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { ...opts, unknownRanks: "exclude" })
    let fresh = frozen
    let tick = 0
    for (let t = 0; t < 40; t++) {
      for (; tick * 0.1 <= t + 1e-9; tick++) {
        const now = tick * 0.1
        const rows = (ts: number) =>
          [0, 1, 2, 3].map((dpRank) => ({ dpRank, timestamp: ts, numRunningReqs: 0, numWaitingReqs: 0 }))
        frozen = applyPoll(frozen, "u", ok(rows(0)), now)
        fresh = applyPoll(fresh, "u", ok(rows(now)), now)
      }
      const sFrozen = statuses(frozen, t)
      const sFresh = statuses(fresh, t)
      expect(sFresh.every((s) => s.known)).toBe(true)
      if (t >= 2) {
        expect(sFrozen.map((s) => s.reason)).toEqual(["stale", "stale", "stale", "stale"])
        const r = route(frozen, { requestId: `x${t}`, inputLength: 1 }, t)
        expect(r._tag).toBe("RouterError")
        if (r._tag === "RouterError")
          expect(r.ranks?.map((s) => s.reason)).toEqual(["stale", "stale", "stale", "stale"])
      } else {
        expect(sFrozen.every((s) => s.known)).toBe(true)
      }
    }
  })

  it("S08 a worker whose load failed to decode is unknown, never -1 or 0: fall back to request counts -> w2", () => {
    for (const unknownRanks of ["inflight", "exclude"] as const) {
      let r = makeRouter(
        totalTokens,
        [
          { url: "w1", dpSize: 1 },
          { url: "w2", dpSize: 1 }
        ],
        { staleAfterSeconds: 1, unknownRanks }
      )
      r = applyPoll(r, "w1", failed("decode"), 0)
      r = applyPoll(
        r,
        "w2",
        ok([{ dpRank: 0, numRunningReqs: 2, numWaitingReqs: 0, numTotalTokens: 5000 }]),
        0
      )
      // in-flight: w1 10, w2 2
      for (let i = 0; i < 10; i++) r = { ...r, inflight: HashMap.set(r.inflight, `a${i}`, 0) }
      r = {
        ...r,
        inflight: HashMap.set(HashMap.set(r.inflight, "b0", 1), "b1", 1),
        inflightPerRank: [10, 2]
      }
      const s = statuses(r, 0.5)
      expect(s[0]?.known).toBe(false)
      expect(s[0]?.reason).toBe("decode-failed")
      expect(s[0]?.load).toBeUndefined()
      const d = placed(route(r, { requestId: "new", inputLength: 100 }, 0.5)).decision
      expect(d.workerUrl).toBe("w2")
    }
  })

  it("S09 a rank whose gauges are missing is unknown (missing-field), not 0, and is not picked when excluding", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], {
      staleAfterSeconds: 1,
      unknownRanks: "exclude",
      requiredFields: ["numRunningReqs", "numWaitingReqs"]
    })
    r = applyPoll(r, "u", ok([{ dpRank: 0 }, { dpRank: 1, numRunningReqs: 5, numWaitingReqs: 3 }]), 0)
    const s = statuses(r, 0)
    expect(s[0]).toMatchObject({
      known: false,
      reason: "missing-field",
      missing: ["numRunningReqs", "numWaitingReqs"]
    })
    for (let i = 0; i < 5; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 1 }, 0.01 * i))
      r = p.state
      expect(p.decision.rank).toBe(1)
    }
  })

  it("S13 replicas: each of 3 replicas with local in-flight [22,0,0,0] follows the engine-reported running [66,0,0,0]", () => {
    for (let replica = 0; replica < 3; replica++) {
      let r = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1 })
      for (let i = 0; i < 22; i++) r = { ...r, inflight: HashMap.set(r.inflight, `l${replica}-${i}`, 0) }
      r = { ...r, inflightPerRank: [22, 0, 0, 0] }
      const running = [66, 0, 0, 0]
      r = applyPoll(
        r,
        "u",
        ok(
          running.map((n, dpRank) => ({
            dpRank,
            timestamp: 1,
            numRunningReqs: n,
            numWaitingReqs: 0,
            numTotalTokens: 0
          }))
        ),
        1
      )
      const d = placed(route(r, { requestId: `next${replica}`, inputLength: 10 }, 1.05)).decision
      expect([1, 2, 3]).toContain(d.rank)
      expect(d.mode).toBe("policy")
    }
  })

  it("S06 in-flight counts equal the ground truth after any sequence of routes, finishes, aborts and polls", () => {
    type Op =
      | { op: "route"; id: number }
      | { op: "finish"; id: number }
      | { op: "poll"; worker: number; fail: boolean; running: number }
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant("route" as const), id: fc.nat(40) }),
      fc.record({ op: fc.constant("finish" as const), id: fc.nat(40) }),
      fc.record({
        op: fc.constant("poll" as const),
        worker: fc.nat(1),
        fail: fc.boolean(),
        running: fc.nat(50)
      })
    )
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const workers = [
          { url: "a", dpSize: 4 },
          { url: "b", dpSize: 4 }
        ]
        let r = makeRouter(totalRequests, workers, { staleAfterSeconds: 0.5 })
        const truth = new Map<string, number>()
        let now = 0
        for (const o of ops) {
          now += 0.01
          if (o.op === "route") {
            const out = route(r, { requestId: `r${o.id}`, inputLength: 16 }, now)
            if (truth.has(`r${o.id}`)) expect(out._tag).toBe("RouterError")
            else if (out._tag === "Routed") {
              r = out.state
              truth.set(`r${o.id}`, out.decision.rank)
            }
          } else if (o.op === "finish") {
            const out = finish(r, `r${o.id}`, now)
            expect(out.found).toBe(truth.has(`r${o.id}`))
            truth.delete(`r${o.id}`)
            r = out.state
          } else {
            const url = workers[o.worker]!.url
            r = applyPoll(
              r,
              url,
              o.fail
                ? failed("unreachable")
                : ok(
                    [0, 1, 2, 3].map((dpRank) => ({
                      dpRank,
                      timestamp: now,
                      numRunningReqs: o.running,
                      numWaitingReqs: 0,
                      numTotalTokens: 0
                    }))
                  ),
              now
            )
          }
          const expected = Array.from({ length: 8 }, () => 0)
          for (const rank of truth.values()) expected[rank]! += 1
          expect(r.inflightPerRank).toEqual(expected)
          expect(HashMap.size(r.inflight)).toBe(truth.size)
        }
        for (const id of [...truth.keys()]) r = finish(r, id, now).state
        expect(r.inflightPerRank).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
      }),
      { seed: 1, numRuns: 200 }
    )
  })
})

describe("router rules", () => {
  it("an unreachable worker is excluded even in in-flight mode; all unreachable is a typed error", () => {
    let r = makeRouter(
      totalRequests,
      [
        { url: "a", dpSize: 1 },
        { url: "b", dpSize: 1 }
      ],
      { staleAfterSeconds: 1 }
    )
    r = applyPoll(r, "a", failed("unreachable"), 0)
    for (let i = 0; i < 4; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 1 }, 0))
      expect(p.decision.workerUrl).toBe("b")
      r = p.state
    }
    // a timed-out poll is "slow", not "dead": b stays a candidate (unknown, in-flight fallback)
    const slow = applyPoll(r, "b", failed("timeout"), 0.1)
    expect(statuses(slow, 0.1)[1]).toMatchObject({ known: false, reachable: true, reason: "poll-timeout" })
    expect(placed(route(slow, { requestId: "s", inputLength: 1 }, 0.2)).decision.workerUrl).toBe("b")
    r = applyPoll(r, "b", failed("http-status"), 0.1)
    const e = route(r, { requestId: "z", inputLength: 1 }, 0.2)
    expect(e._tag).toBe("RouterError")
    if (e._tag === "RouterError") expect(e.reason).toBe("NoAvailableRanks")
  })

  it("a policy that ignores health and picks an unavailable rank is overridden by in-flight counts", () => {
    // SGLang TOTAL_REQUESTS ignores status (upstream); rank 0 reports the lowest load but its worker is down
    let r = makeRouter(
      totalRequests,
      [
        { url: "a", dpSize: 1 },
        { url: "b", dpSize: 2 }
      ],
      { staleAfterSeconds: 10 }
    )
    r = applyPoll(
      r,
      "a",
      ok([{ dpRank: 0, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]),
      0
    )
    r = applyPoll(
      r,
      "b",
      ok([
        { dpRank: 0, timestamp: 1, numRunningReqs: 5, numWaitingReqs: 0, numTotalTokens: 0 },
        { dpRank: 1, timestamp: 1, numRunningReqs: 5, numWaitingReqs: 0, numTotalTokens: 0 }
      ]),
      0
    )
    r = applyPoll(r, "a", failed("http-status"), 0.1)
    const d = placed(route(r, { requestId: "q", inputLength: 1 }, 0.2)).decision
    expect(d.workerUrl).toBe("b")
    expect(d.mode).toBe("inflight")
  })

  it("duplicate request ids are refused; finishing twice is a no-op", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    r = placed(route(r, { requestId: "a", inputLength: 1 }, 0)).state
    const dup = route(r, { requestId: "a", inputLength: 1 }, 0)
    expect(dup._tag === "RouterError" && dup.reason).toBe("DuplicateRequestId")
    const f1 = finish(r, "a", 0)
    const f2 = finish(f1.state, "a", 0)
    expect([f1.found, f2.found]).toEqual([true, false])
    expect(f2.state.inflightPerRank).toEqual([0, 0])
  })
})

describe("docstring examples (continued)", () => {
  it("rankId", () => {
    expect(rankId("http://127.0.0.1:30000", 3)).toBe("http://127.0.0.1:30000@3")
  })
  it("recordRows keeps changedAtSeconds while the publisher timestamp is unchanged", () => {
    let l = makeLedger([{ url: "u", dpSize: 2 }])
    l = recordRows(l, "u", [{ dpRank: 1, timestamp: 7, numRunningReqs: 2 }], 10)
    l = recordRows(l, "u", [{ dpRank: 1, timestamp: 7, numRunningReqs: 2 }], 11)
    expect(l.ranks[1]?.receivedAtSeconds).toBe(11)
    expect(l.ranks[1]?.changedAtSeconds).toBe(10)
    expect(l.ranks[0]?.row).toBeUndefined()
  })
  it("recordFailure counts decode failures apart from fetch failures", () => {
    const l = recordFailure(
      makeLedger([{ url: "u", dpSize: 1 }]),
      "u",
      { _tag: "PollFailure", kind: "decode", message: "bad" },
      3
    )
    expect([l.workers[0]?.decodeFailures, l.workers[0]?.fetchFailures]).toEqual([1, 0])
  })
  it("applyPoll observes only known ranks", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    r = applyPoll(r, "u", ok([{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }]), 0)
    expect(statuses(r, 0).map((s) => s.known)).toEqual([true, false])
  })
  it("statuses of a fresh router: never-reported", () => {
    expect(
      statuses(makeRouter(totalRequests, [{ url: "u", dpSize: 1 }], { staleAfterSeconds: 1 }), 0)[0]?.reason
    ).toBe("never-reported")
  })
  it("makeRouter / route / finish", () => {
    const r0 = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 2 })
    expect(r0.inflightPerRank).toEqual([0, 0, 0, 0])
    const out = placed(route(r0, { requestId: "a", inputLength: 100 }, 0))
    expect([out.decision.mode, out.decision.rank]).toEqual(["inflight", 0])
    expect(finish(out.state, "a", 1).state.inflightPerRank).toEqual([0, 0, 0, 0])
  })
  it("observedImbalance over S08's ranks", () => {
    const rows = [12000, 0, 0, 3000].map((numTotalTokens, dpRank) => ({ dpRank, numTotalTokens }))
    const r = applyPoll(
      makeRouter(totalTokens, [{ url: "u", dpSize: 4 }], {
        staleAfterSeconds: 1,
        requiredFields: ["numTotalTokens"]
      }),
      "u",
      ok(rows),
      0
    )
    expect(observedImbalance(statuses(r, 0))).toBe(3.2)
  })
  it("sourceDecodeKind", () => {
    expect(
      sourceDecodeKind({
        url: "http://h:8000",
        dpSize: 4,
        kind: "vllm-metrics",
        intervalMs: 100,
        timeoutMs: 50
      })
    ).toBe("vllm-metrics")
  })
})
