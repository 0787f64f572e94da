import { findPolicy, type RouteRequest, totalRequests, totalTokens } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"
import { HashMap, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  type Decision,
  finish,
  makeRouter,
  type PollFailure,
  type RouterState,
  route,
  statuses
} from "../src/index.js"

const ok = (rows: ReadonlyArray<RankLoad>) => Result.succeed(rows)
const failed = (kind: PollFailure["kind"]) =>
  Result.fail<PollFailure>({ _tag: "PollFailure", kind, message: kind })
const row = (dpRank: number, running: number, timestamp = 1): RankLoad => ({
  dpRank,
  timestamp,
  numRunningReqs: running,
  numWaitingReqs: 0,
  numTotalTokens: 0
})

const placed = <S>(r: ReturnType<typeof route<S>>): { state: RouterState<S>; decision: Decision } => {
  if (r._tag === "RouterError") throw new Error(`expected a placement, got ${r.reason}: ${r.message}`)
  return r
}

describe("fault cases", () => {
  it("S01 start-up burst before any snapshot is spread 8/8/8/8 by the fallback, each counted as no-known-rank", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1 })
    const reasons = new Set<string | undefined>()
    for (let i = 0; i < 32; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 100 }, i * 0.0015))
      reasons.add(p.decision.fallbackReason)
      r = p.state
    }
    expect(r.inflightPerRank).toEqual([8, 8, 8, 8])
    expect([...reasons]).toEqual(["no-known-rank"])
  })

  it("S04 a frozen publisher goes stale from t = 2 s on and leaves the view; fresh snapshots never do", () => {
    const opts = { staleAfterSeconds: 1, requiredFields: ["numRunningReqs", "numWaitingReqs"] as const }
    let frozen = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], opts)
    let fresh = frozen
    let tick = 0
    for (let t = 0; t < 40; t++) {
      for (; tick * 0.1 <= t + 1e-9; tick++) {
        const now = tick * 0.1
        const rows = (ts: number) => [0, 1, 2, 3].map((dpRank) => row(dpRank, 0, ts))
        frozen = applyPoll(frozen, "u", ok(rows(0)), now)
        fresh = applyPoll(fresh, "u", ok(rows(now)), now)
      }
      expect(statuses(fresh, t).every((s) => s.condition === "known")).toBe(true)
      const d = placed(route(frozen, { requestId: `x${t}`, inputLength: 1 }, t)).decision
      if (t >= 2) {
        expect(statuses(frozen, t).map((s) => s.reason)).toEqual(["stale", "stale", "stale", "stale"])
        expect(statuses(frozen, t).map((s) => s.row.unknown?.reason)).toEqual([
          "stale",
          "stale",
          "stale",
          "stale"
        ])
        // every rank is stale but the worker answers: nothing is usable by the policy, the fallback decides
        expect([d.mode, d.fallbackReason]).toEqual(["fallback", "no-known-rank"])
      } else expect(d.mode).toBe("policy")
    }
  })

  it("S08 one worker's load failed to decode: the policy still decides, among the known ranks (w2)", () => {
    let r = makeRouter(
      totalTokens,
      [
        { url: "w1", dpSize: 1 },
        { url: "w2", dpSize: 1 }
      ],
      { staleAfterSeconds: 1 }
    )
    r = applyPoll(r, "w1", failed("decode"), 0)
    r = applyPoll(r, "w2", ok([{ dpRank: 0, numRunningReqs: 2, numWaitingReqs: 0, numTotalTokens: 5000 }]), 0)
    const s = statuses(r, 0.5)
    expect(s[0]).toMatchObject({ condition: "unknown", reason: "decode-failed" })
    expect(s[0]?.row).toEqual({
      dpRank: 0,
      worker: "w1",
      workerDpRank: 0,
      unknown: { reason: "not-reported", message: "decode-failed: decode" }
    })
    for (let i = 0; i < 5; i++) {
      const p = placed(route(r, { requestId: `n${i}`, inputLength: 100 }, 0.5))
      expect([p.decision.workerUrl, p.decision.mode]).toEqual(["w2", "policy"])
      r = p.state
    }
  })

  it("S08 -1 from the decoder (a rejected row) is unknown and out of the view, never 0 or -1", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    r = applyPoll(
      r,
      "u",
      ok([
        { dpRank: 0, unknown: { reason: "negative-count", message: "num_running_reqs is -1" } },
        row(1, 9)
      ]),
      0
    )
    expect(statuses(r, 0)[0]).toMatchObject({ condition: "unknown", reason: "rejected-row" })
    expect(statuses(r, 0)[0]?.row.unknown?.reason).toBe("negative-count")
    expect(r.view.members).toEqual([1])
    expect(placed(route(r, { requestId: "a", inputLength: 1 }, 0.1)).decision.rank).toBe(1)
  })

  it("S09 a rank whose gauges are missing is unknown (missing-field), not 0, and is never picked", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], {
      staleAfterSeconds: 1,
      requiredFields: ["numRunningReqs", "numWaitingReqs"]
    })
    r = applyPoll(r, "u", ok([{ dpRank: 0 }, { dpRank: 1, numRunningReqs: 5, numWaitingReqs: 3 }]), 0)
    expect(statuses(r, 0)[0]).toMatchObject({
      condition: "unknown",
      reason: "missing-field",
      missing: ["numRunningReqs", "numWaitingReqs"]
    })
    for (let i = 0; i < 5; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 1 }, 0.01 * i))
      r = p.state
      expect([p.decision.rank, p.decision.mode]).toEqual([1, "policy"])
    }
  })

  it("S13 replicas: each of 3 replicas with local in-flight [22,0,0,0] follows the engine-reported running [66,0,0,0]", () => {
    for (let replica = 0; replica < 3; replica++) {
      let r = makeRouter(totalRequests, [{ url: "u", dpSize: 4 }], { staleAfterSeconds: 1 })
      for (let i = 0; i < 22; i++)
        r = placed(route(r, { requestId: `l${replica}-${i}`, inputLength: 1 }, 0)).state
      r = applyPoll(r, "u", ok([66, 0, 0, 0].map((n, dpRank) => row(dpRank, n))), 1)
      const d = placed(route(r, { requestId: `next${replica}`, inputLength: 10 }, 1.05)).decision
      expect([1, 2, 3]).toContain(d.rank)
      expect(d.mode).toBe("policy")
    }
  })
})

describe("the view the policy decides in", () => {
  type Event =
    | { readonly op: "route" }
    | { readonly op: "finish"; readonly k: number }
    | { readonly op: "tick"; readonly seconds: number }
    | {
        readonly op: "poll"
        readonly worker: number
        readonly kind: "ok" | "negative" | "missing" | "frozen" | PollFailure["kind"]
        readonly running: number
      }
  const eventArb: fc.Arbitrary<Event> = fc.oneof(
    { weight: 4, arbitrary: fc.constant({ op: "route" as const }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("finish" as const), k: fc.nat(50) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("tick" as const),
        seconds: fc.double({ min: 0, max: 1.5, noNaN: true })
      })
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("poll" as const),
        worker: fc.nat(2),
        kind: fc.constantFrom(
          "ok",
          "ok",
          "negative",
          "missing",
          "frozen",
          "unreachable",
          "timeout",
          "http-status",
          "decode"
        ),
        running: fc.nat(20)
      })
    }
  )
  const workers = [
    { url: "a", dpSize: 2 },
    { url: "b", dpSize: 2 },
    { url: "c", dpSize: 1 }
  ]
  const policies = ["total-requests", "total-tokens", "round-robin", "vllm-kv-pressure", "ledger-balanced"]

  it("the policy decides whenever a rank is known, only among known ranks; the fallback only when none is, never on an unhealthy rank; in-flight stays exact", () => {
    fc.assert(
      fc.property(fc.constantFrom(...policies), fc.array(eventArb, { maxLength: 120 }), (name, events) => {
        let r: RouterState<unknown> = makeRouter(findPolicy(name)!.make({ seed: 1 }), workers, {
          staleAfterSeconds: 1
        })
        let now = 0
        let n = 0
        const truth = new Map<string, number>()
        for (const e of events) {
          now += 0.01
          if (e.op === "tick") now += e.seconds
          else if (e.op === "finish") {
            const id = [...truth.keys()][e.k % Math.max(1, truth.size)]
            if (id !== undefined) {
              r = finish(r, id, now).state
              truth.delete(id)
            }
          } else if (e.op === "poll") {
            const w = workers[e.worker]!
            const rows = Array.from({ length: w.dpSize }, (_, dpRank): RankLoad => {
              if (e.kind === "negative")
                return { dpRank, unknown: { reason: "negative-count", message: "-1" } }
              if (e.kind === "missing") return { dpRank, timestamp: now, numTotalTokens: 3 }
              return row(dpRank, e.running, e.kind === "frozen" ? 0 : now)
            })
            const polled =
              e.kind === "ok" || e.kind === "negative" || e.kind === "missing" || e.kind === "frozen"
                ? ok(rows)
                : failed(e.kind)
            r = applyPoll(r, w.url, polled, now)
          } else {
            const ranks = statuses(r, now)
            const out = route(r, { requestId: `q${n}`, inputLength: 8 }, now)
            n++
            const known = ranks.filter((s) => s.condition === "known").map((s) => s.index)
            const healthy = ranks.filter((s) => s.condition !== "unhealthy").map((s) => s.index)
            if (healthy.length === 0) {
              expect(out._tag).toBe("RouterError")
              continue
            }
            const p = placed(out)
            if (known.length > 0) {
              expect(p.decision.mode).toBe("policy")
              expect(known).toContain(p.decision.rank)
            } else {
              expect([p.decision.mode, p.decision.fallbackReason]).toEqual(["fallback", "no-known-rank"])
              expect(healthy).toContain(p.decision.rank)
            }
            r = p.state
            truth.set(p.decision.requestId, p.decision.rank)
          }
          const expected = Array.from({ length: 5 }, () => 0)
          for (const rank of truth.values()) expected[rank]! += 1
          expect(r.inflightPerRank).toEqual(expected)
          expect(HashMap.size(r.inflight)).toBe(truth.size)
        }
      }),
      { seed: 12, numRuns: 150 }
    )
  })

  it("a health-blind policy (SGLang total-requests) never sees a down worker: it is out of the view, not overridden after", () => {
    let r = makeRouter(
      totalRequests,
      [
        { url: "a", dpSize: 1 },
        { url: "b", dpSize: 2 }
      ],
      { staleAfterSeconds: 10 }
    )
    r = applyPoll(r, "a", ok([row(0, 0)]), 0)
    r = applyPoll(r, "b", ok([row(0, 5), row(1, 5)]), 0)
    expect(r.view.members).toEqual([0, 1, 2])
    r = applyPoll(r, "a", failed("http-status"), 0.1)
    expect(r.view.members).toEqual([1, 2])
    const d = placed(route(r, { requestId: "q", inputLength: 1 }, 0.2)).decision
    expect([d.workerUrl, d.mode]).toEqual(["b", "policy"])
    expect(d.explanation.details?.view).toEqual([1, 2])
  })

  it("unhealthy (refused, timed out, non-2xx) is excluded from the fallback too; none healthy is NoAvailableRanks", () => {
    let r = makeRouter(
      totalRequests,
      [
        { url: "a", dpSize: 1 },
        { url: "b", dpSize: 1 }
      ],
      { staleAfterSeconds: 1 }
    )
    r = applyPoll(r, "a", failed("timeout"), 0)
    expect(statuses(r, 0)[0]).toMatchObject({ condition: "unhealthy", reason: "poll-timeout" })
    for (let i = 0; i < 4; i++) {
      const p = placed(route(r, { requestId: `q${i}`, inputLength: 1 }, 0))
      expect(p.decision.workerUrl).toBe("b")
      r = p.state
    }
    r = applyPoll(r, "b", failed("unreachable"), 0.1)
    const e = route(r, { requestId: "z", inputLength: 1 }, 0.2)
    expect(e._tag === "RouterError" && e.reason).toBe("NoAvailableRanks")
    // a good poll brings a back
    r = applyPoll(r, "a", ok([row(0, 0)]), 0.3)
    expect(placed(route(r, { requestId: "y", inputLength: 1 }, 0.3)).decision).toMatchObject({
      workerUrl: "a",
      mode: "policy"
    })
  })

  it("a view rebuild keeps in-flight exact; a request placed before it is not finished in the new policy state", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    r = applyPoll(r, "u", ok([row(0, 0), row(1, 0)]), 0)
    const g = r.view.generation
    r = placed(route(r, { requestId: "old", inputLength: 1 }, 0)).state
    r = applyPoll(r, "u", ok([row(0, 0)]), 0.1) // rank 1 leaves: rebuilt
    expect(r.view.generation).toBe(g + 1)
    const f = finish(r, "old", 0.2)
    expect(f.found).toBe(true)
    expect(f.state.inflightPerRank).toEqual([0, 0])
    expect(f.state.view.state).toBe(r.view.state)
  })

  it("routedDpRank is a global rank: mapped into the view, refused when the rank is not usable", () => {
    let r = makeRouter(totalRequests, [{ url: "u", dpSize: 3 }], { staleAfterSeconds: 1 })
    r = applyPoll(r, "u", ok([row(0, 0), row(2, 0)]), 0)
    expect(placed(route(r, { requestId: "a", inputLength: 1, routedDpRank: 2 }, 0)).decision.rank).toBe(2)
    const e = route(r, { requestId: "b", inputLength: 1, routedDpRank: 1 }, 0)
    expect(e._tag === "RouterError" && e.reason).toBe("InvalidRoutedRank")
  })

  it("a request enters through one check: an inputLength that is no token count is InvalidInput, on the policy and the fallback path alike, and nothing is placed", () => {
    const none = makeRouter(totalTokens, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    const known = applyPoll(none, "u", ok([row(0, 0), row(1, 0)]), 0)
    for (const r of [none, known])
      for (const inputLength of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
        const e = route(r, { requestId: "a", inputLength }, 0)
        expect(e._tag === "RouterError" && [e.reason, e.field]).toEqual(["InvalidInput", "inputLength"])
      }
    // the boundary's rule is the policies' own: 0 and a large safe integer are token counts
    expect(placed(route(known, { requestId: "a", inputLength: 0 }, 0)).decision.mode).toBe("policy")
    expect(placed(route(none, { requestId: "a", inputLength: 2 ** 53 - 1 }, 0)).decision.mode).toBe(
      "fallback"
    )
  })

  it("a request at a now that is not finite seconds is InvalidInput naming now, on the policy and the fallback path alike; negative times route", () => {
    const none = makeRouter(totalTokens, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    const known = applyPoll(none, "u", ok([row(0, 0), row(1, 0)]), 0)
    for (const r of [none, known])
      for (const now of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const e = route(r, { requestId: "a", inputLength: 1 }, now)
        expect(e._tag === "RouterError" && [e.reason, e.field, e.message]).toEqual([
          "InvalidInput",
          "now",
          `now must be finite seconds, got ${now}`
        ])
        // a request bad in both gets the inputLength error, as from every policy
        const both = route(r, { requestId: "a", inputLength: -1 }, now)
        expect(both._tag === "RouterError" && both.field).toBe("inputLength")
      }
    expect(placed(route(known, { requestId: "a", inputLength: 1 }, 0.5)).decision.mode).toBe("policy")
    expect(placed(route(none, { requestId: "a", inputLength: 1 }, -7)).decision.mode).toBe("fallback")
  })

  it("a request with a field not of its type (prefixHashes a string, ...) is InvalidInput naming it, after inputLength and now, on the policy and the fallback path alike", () => {
    const none = makeRouter(totalTokens, [{ url: "u", dpSize: 2 }], { staleAfterSeconds: 1 })
    const known = applyPoll(none, "u", ok([row(0, 0), row(1, 0)]), 0)
    const bad = (fields: Record<string, unknown>, inputLength = 1) =>
      ({ requestId: "a", inputLength, ...fields }) as RouteRequest
    for (const r of [none, known]) {
      for (const [fields, field] of [
        [{ prefixHashes: "abc" }, "prefixHashes"],
        [{ prefixHashes: ["a", 1] }, "prefixHashes[1]"],
        [{ sessionId: 7 }, "sessionId"],
        [{ bootstrapRoom: 7 }, "bootstrapRoom"],
        [{ requestId: 7 }, "requestId"]
      ] as const) {
        const e = route(r, bad(fields), 0)
        expect(e._tag === "RouterError" && [e.reason, e.field]).toEqual(["InvalidInput", field])
      }
      const both = route(r, bad({ prefixHashes: "abc" }, -1), 0)
      expect(both._tag === "RouterError" && both.field).toBe("inputLength")
      const late = route(r, bad({ prefixHashes: "abc" }), Number.NaN)
      expect(late._tag === "RouterError" && late.field).toBe("now")
    }
    expect(placed(route(known, bad({ prefixHashes: ["a"], sessionId: "s" }), 0)).decision.mode).toBe("policy")
    expect(placed(route(none, bad({ prefixHashes: [] }), 0)).decision.mode).toBe("fallback")
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

describe("several router replicas over one engine group (vLLM client_count)", () => {
  // Two replicas see the same engine report (all idle) and route a burst of 4 each before the next
  // poll. Each replica's in-flight is only its own.
  const burst = (clientCount: number) => {
    const placements: Array<number> = []
    for (let replica = 0; replica < 2; replica++) {
      // uncompensated, each replica believes it is the only front end (client 0 of 1)
      const clientIndex = clientCount === 1 ? 0 : replica
      const policy = findPolicy("vllm-kv-pressure")!.make({ clientCount, clientIndex })
      let r = makeRouter(policy, [{ url: "u", dpSize: 8 }], {
        staleAfterSeconds: 1,
        clientCount,
        clientIndex
      })
      r = applyPoll(r, "u", ok(Array.from({ length: 8 }, (_, i) => row(i, 0))), 0)
      for (let i = 0; i < 4; i++) {
        const p = placed(route(r, { requestId: `${replica}-${i}`, inputLength: 1 }, 0.001 * i))
        placements.push(p.decision.rank)
        r = p.state
      }
    }
    const perRank = Array.from({ length: 8 }, () => 0)
    for (const p of placements) perRank[p]! += 1
    return perRank
  }

  it("without compensation both replicas herd onto the same ranks; with clientCount 2 the burst spreads over all 8", () => {
    expect(Math.max(...burst(1))).toBe(2)
    expect(burst(1).filter((c) => c === 0).length).toBe(4)
    expect(burst(2)).toEqual([1, 1, 1, 1, 1, 1, 1, 1])
  })

  it("the in-flight fallback starts each replica's scan at floor(N * clientIndex / clientCount)", () => {
    const first = [0, 1, 2].map(
      (clientIndex) =>
        placed(
          route(
            makeRouter(totalRequests, [{ url: "u", dpSize: 8 }], {
              staleAfterSeconds: 1,
              clientCount: 3,
              clientIndex
            }),
            { requestId: "a", inputLength: 1 },
            0
          )
        ).decision
    )
    expect(first.map((d) => d.rank)).toEqual([0, 2, 5])
    expect(first[1]?.explanation.scores?.[2]).toBe(0)
  })
})
