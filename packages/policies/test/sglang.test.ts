import { readFileSync } from "node:fs"
import {
  DpBudget,
  DpController,
  findPolicy,
  followBootstrapRoom,
  isPolicyError,
  type Policy,
  type RankLoad,
  type RouteRequest,
  roundRobin,
  sglangPolicies,
  totalRequests,
  totalTokens
} from "@loadledger/policies"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

type State = DpController.DpControllerState
const load = (dpRank: number, timestamp: number, running: number, waiting: number, tokens: number) =>
  ({
    dpRank,
    timestamp,
    numRunningReqs: running,
    numWaitingReqs: waiting,
    numTotalTokens: tokens
  }) satisfies RankLoad
const req = (inputLength: number, extra: Partial<RouteRequest> = {}): RouteRequest => ({
  requestId: "r",
  inputLength,
  ...extra
})
const routeAll = (
  policy: Policy<State>,
  s0: State,
  reqs: ReadonlyArray<RouteRequest>,
  now: (i: number) => number
) => {
  let s = s0
  const ranks: Array<number> = []
  reqs.forEach((r, i) => {
    const out = policy.route(s, r, now(i))
    if (isPolicyError(out)) throw new Error(out.message)
    ranks.push(out.rank)
    s = out.state
  })
  return { ranks, state: s }
}

describe("DpBudget (README section 1, update_budget / budget_dispatch)", () => {
  it("skips a snapshot whose timestamp equals the last one exactly, but applies an older one", () => {
    const b1 = DpBudget.update(DpBudget.empty(2), [load(0, 5, 3, 4, 100)])
    expect(b1.totalRequests).toEqual([7, 0])
    const same = DpBudget.update(b1, [load(0, 5, 9, 9, 999)])
    expect(same).toBe(b1)
    const older = DpBudget.update(b1, [load(0, 4, 1, 0, 10)])
    expect(older.totalRequests).toEqual([1, 0])
    expect(older.totalTokens).toEqual([10, 0])
    expect(older.lastTimestamp).toEqual([4, 0])
  })

  it("skips the writer's initial payload (timestamp 0.0) until the rank has another timestamp", () => {
    const b = DpBudget.update(DpBudget.empty(1), [load(0, 0, 5, 5, 50)])
    expect(b.totalRequests).toEqual([0])
    const b2 = DpBudget.update(DpBudget.update(b, [load(0, 1, 1, 1, 1)]), [load(0, 0, 5, 5, 50)])
    expect(b2.totalRequests).toEqual([10])
  })

  it("applies a list in order, a repeated rank included (the later equal timestamp is skipped)", () => {
    const b = DpBudget.update(DpBudget.empty(2), [
      load(1, 2, 1, 0, 1),
      load(1, 2, 8, 0, 8),
      load(1, 3, 2, 0, 2)
    ])
    expect(b.totalRequests).toEqual([0, 2])
  })

  it("TOTAL_TOKENS compares (tokens, requests) lexicographically, ties to the lowest index", () => {
    const b = DpBudget.update(DpBudget.empty(3), [
      load(0, 1, 5, 0, 100),
      load(1, 1, 2, 0, 100),
      load(2, 1, 2, 0, 100)
    ])
    const d = DpBudget.dispatch(b, "TOTAL_TOKENS", 7)
    expect(d.rank).toBe(1)
    expect(d.budget.totalRequests).toEqual([5, 3, 2])
    expect(d.budget.totalTokens).toEqual([100, 107, 100])
    // tokens tie 100/100 at ranks 0 and 2: the request count (5 vs 2) decides
    expect(DpBudget.dispatch(d.budget, "TOTAL_TOKENS", 0).rank).toBe(2)
  })

  it("dispatch under another method returns no rank and the same budget", () => {
    const b = DpBudget.empty(2)
    expect(DpBudget.dispatch(b, "ROUND_ROBIN", 5)).toEqual({ rank: undefined, budget: b })
  })

  it("never mutates its input", () => {
    const b = DpBudget.empty(2)
    DpBudget.dispatch(b, "TOTAL_TOKENS", 5)
    DpBudget.update(b, [load(0, 1, 1, 1, 1)])
    expect(b).toEqual(DpBudget.empty(2))
  })
})

describe("DpController (refresh, schedule)", () => {
  it("throttles with a strict < on the IEEE subtraction, starting from 0", () => {
    const s = DpController.init("TOTAL_REQUESTS", 1)
    expect(DpController.refresh(s, 0.019).refreshed).toBe(false)
    const a = DpController.refresh(s, 0.02)
    expect(a.refreshed).toBe(true)
    const at = DpController.refresh(s, 0.1).state
    expect(DpController.refresh(at, 0.12).refreshed).toBe(false) // 0.12 - 0.1 = 0.01999...
    expect(DpController.refresh(at, 0.13).refreshed).toBe(true)
  })

  it("FOLLOW_BOOTSTRAP_ROOM is Python floor-modulo on the exact integer", () => {
    const s = DpController.init("FOLLOW_BOOTSTRAP_ROOM", 4)
    const rank = (room: string, n = 4) => {
      const out = DpController.schedule({ ...s, dpSize: n }, req(1, { bootstrapRoom: room }))
      return "rank" in out ? out.rank : out.reason
    }
    expect(rank("18446744073709551623")).toBe(3) // 2^64 + 7
    expect(rank("-1")).toBe(3)
    expect(rank("-9223372036854775808", 3)).toBe(1) // -2^63 mod 3
    expect(rank("9007199254740993", 3)).toBe(0) // 2^53 + 1
    expect(rank("9223372036854775807", 7)).toBe(0) // 2^63 - 1
    expect(rank("1e3")).toBe("InvalidInput")
    const missing = DpController.schedule(s, req(1))
    expect("reason" in missing && missing.reason).toBe("MissingBootstrapRoom")
  })

  it("FOLLOW_BOOTSTRAP_ROOM on decimal strings agrees with BigInt floor-modulo for any 64-bit room", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(2n ** 64n), max: 2n ** 65n }),
        fc.integer({ min: 1, max: 4096 }),
        (room, n) => {
          const s = DpController.init("FOLLOW_BOOTSTRAP_ROOM", n)
          const m = BigInt(n)
          const want = Number(((room % m) + m) % m)
          const fromString = DpController.schedule(s, req(1, { bootstrapRoom: ` ${room} ` }))
          const fromBigint = DpController.schedule(s, req(1, { bootstrapRoom: room }))
          return (
            "rank" in fromString &&
            fromString.rank === want &&
            "rank" in fromBigint &&
            fromBigint.rank === want
          )
        }
      )
    )
    for (const bad of ["", "-", "+", "1.0", "0x10", "12a"]) {
      const out = DpController.schedule(
        DpController.init("FOLLOW_BOOTSTRAP_ROOM", 4),
        req(1, { bootstrapRoom: bad })
      )
      expect("reason" in out && out.reason).toBe("InvalidInput")
    }
  })

  it("ROUND_ROBIN skips unhealthy slots and errors with the counter unchanged when none is healthy", () => {
    const s = DpController.setStatus(DpController.init("ROUND_ROBIN", 3), [false, true, true]).state
    const a = DpController.dispatchRequest(s, req(1), 1)
    expect(a.rank).toBe(1)
    expect(a.state.roundRobinCounter).toBe(2)
    const down = DpController.setStatus(a.state, [false, false, false]).state
    const e = DpController.dispatchRequest(down, req(1), 1)
    expect(e.error?.reason).toBe("AllRanksUnavailable")
    expect(e.error?.message).toBe("Cannot route request: all 3 active DP workers are unavailable.")
    expect(e.state.roundRobinCounter).toBe(2)
    expect(DpController.setStatus(s, [true]).applied).toBe(false)
  })

  it("a routed request still uses up the refresh window and bypasses the budget", () => {
    const s = DpController.publish(DpController.init("TOTAL_TOKENS", 2), [load(0, 9, 1, 0, 10)])
    const routed = DpController.dispatchRequest(s, req(50, { routedDpRank: 1 }), 1)
    expect(routed).toMatchObject({ refreshed: true, rank: 1 })
    expect(routed.state.budget.totalRequests).toEqual([1, 0])
    const bad = DpController.dispatchRequest(s, req(50, { routedDpRank: 2 }), 1)
    expect(bad.error?.message).toBe("DP rank 2 is not active.")
    expect(bad.state.lastRefreshTimeSeconds).toBe(1)
  })

  it("TOTAL_REQUESTS charges no tokens when scheduling", () => {
    const out = DpController.dispatchRequest(DpController.init("TOTAL_REQUESTS", 2), req(4096), 1)
    expect(out.state.budget.totalTokens).toEqual([0, 0])
    expect(out.state.budget.totalRequests).toEqual([1, 0])
  })
})

// The golden vectors replayed through the Policy objects: every case made only of publish /
// set_status / request / batch ops (a batch is a run of routes at one `now`: the first refreshes).
describe("Policy objects reproduce dp_lb_cases.json", () => {
  const doc = JSON.parse(
    readFileSync(new URL("../../../fixtures/reference/sglang/dp_lb_cases.json", import.meta.url), "utf8")
  )
  const errorType = { InvalidRoutedRank: "ValueError", AllRanksUnavailable: "RuntimeError" } as Record<
    string,
    string
  >
  const cases: Array<WireCase> = doc.cases.filter((c: WireCase) =>
    c.ops.every((o) => ["publish", "set_status", "request", "batch"].includes(o.op))
  )
  it("has policy-expressible cases in every relevant category", () => {
    expect(cases.length).toBe(69)
  })
  it.each(cases.map((c: WireCase) => [c.id, c] as const))("%s", (_id, c: WireCase) => {
    const policy = sglangPolicies[c.method]
    let s = policy.init(c.dp_size)
    if (c.initial_shm === "writer_init") s = DpController.init(c.method, c.dp_size, "writer_init")
    const toReq = (r: WireReq): RouteRequest => ({
      requestId: "x",
      inputLength: r.input_len,
      routedDpRank: r.routed_dp_rank ?? undefined,
      bootstrapRoom: r.bootstrap_room ?? undefined
    })
    for (const op of c.ops) {
      if (op.op === "publish") s = policy.observe(s, op.snapshots.map(fromWire), 0)
      else if (op.op === "set_status") s = policy.setStatus(s, op.status)
      else {
        const reqs = op.op === "batch" ? op.requests : [op]
        const ranks: Array<number> = []
        let error: string | undefined
        for (const r of reqs) {
          const out = policy.route(s, toReq(r), op.now)
          if (isPolicyError(out)) {
            error = out.reason === "MissingBootstrapRoom" ? "AssertionError" : errorType[out.reason]
            if (out.state !== undefined) s = out.state as State
            break
          }
          ranks.push(out.rank)
          s = out.state
        }
        expect(error).toBe(op.expect.error?.type)
        if (op.op === "batch") expect(ranks).toEqual(op.expect.ranks)
        else expect(ranks[0] ?? null).toBe(op.expect.rank)
      }
      if (op.expect.state !== undefined) {
        expect(s.budget.totalRequests).toEqual(op.expect.state.total_requests)
        expect(s.budget.totalTokens).toEqual(op.expect.state.total_tokens)
        expect(s.budget.lastTimestamp).toEqual(op.expect.state.last_timestamp)
        expect(s.roundRobinCounter).toBe(op.expect.state.round_robin_counter)
        expect(s.lastRefreshTimeSeconds).toBe(op.expect.state.last_refresh_time)
      }
    }
  })
})
interface WireLoad {
  dp_rank: number
  timestamp: number
  num_running_reqs: number
  num_waiting_reqs: number
  num_total_tokens: number
}
interface WireReq {
  input_len: number
  routed_dp_rank?: number
  bootstrap_room?: string
}
interface WireState {
  total_requests: Array<number>
  total_tokens: Array<number>
  last_timestamp: Array<number>
  round_robin_counter: number
  last_refresh_time: number
}
interface WireOp extends WireReq {
  op: string
  now: number
  snapshots: Array<WireLoad>
  status: Array<boolean>
  requests: Array<WireReq>
  expect: { rank?: number | null; ranks?: Array<number>; error?: { type: string }; state?: WireState }
}
interface WireCase {
  id: string
  method: DpBudget.LoadBalanceMethod
  dp_size: number
  initial_shm: string
  ops: Array<WireOp>
}
const fromWire = (x: WireLoad): RankLoad =>
  load(x.dp_rank, x.timestamp, x.num_running_reqs, x.num_waiting_reqs, x.num_total_tokens)

describe("explanations", () => {
  it("carry the budget compared, the scores, the tie-break and whether the ledger was refreshed", () => {
    const s = totalTokens.observe(totalTokens.init(2), [load(0, 1, 2, 0, 300), load(1, 1, 1, 0, 300)], 1)
    const out = totalTokens.route(s, req(10), 1)
    if (isPolicyError(out)) throw new Error(out.message)
    expect(out.rank).toBe(1)
    expect(out.explanation.scores).toEqual([300, 300])
    expect(out.explanation.refreshed).toBe(true)
    expect(out.explanation.tieBreak).toBe("lowest index among minimal (totalTokens, totalRequests)")
    expect(out.explanation.details).toMatchObject({ budget: { totalRequests: [2, 1] } })
  })
})

describe("registry", () => {
  it("lists the four SGLang policies by name as reference policies", () => {
    for (const name of ["round-robin", "follow-bootstrap-room", "total-requests", "total-tokens"]) {
      const e = findPolicy(name)
      expect(e?.engine).toBe("sglang")
      expect(e?.reference).toBe(true)
      expect(e?.make({}).name).toBe(name)
    }
    // the registry's entry is the exported policy behind its input checks: the same decisions
    const entry = findPolicy("total-tokens")!.make({})
    const loads = [0, 1, 2].map((r) => ({
      dpRank: r,
      timestamp: 1,
      numRunningReqs: 1,
      numWaitingReqs: 0,
      numTotalTokens: 300 - 100 * r
    }))
    let a: unknown = entry.observe(entry.init(3), loads, 1)
    let b = totalTokens.observe(totalTokens.init(3), loads, 1)
    for (let i = 0; i < 6; i++) {
      const ra = entry.route(a, { requestId: `q${i}`, inputLength: 50 }, 1.001)
      const rb = totalTokens.route(b, { requestId: `q${i}`, inputLength: 50 }, 1.001)
      if (ra._tag !== "Routed" || rb._tag !== "Routed") throw new Error("not routed")
      expect(ra.rank).toBe(rb.rank)
      a = ra.state
      b = rb.state
    }
    expect(entry.route(entry.init(2.5), { requestId: "x", inputLength: 1 }, 1)).toMatchObject({
      reason: "InvalidInput",
      field: "dpSize"
    })
  })
})

describe("docstring examples", () => {
  it("DpBudget.empty / update / dispatch / charge", () => {
    expect(DpBudget.empty(2)).toEqual({ totalRequests: [0, 0], totalTokens: [0, 0], lastTimestamp: [0, 0] })
    const l = { dpRank: 1, timestamp: 1, numRunningReqs: 2, numWaitingReqs: 3, numTotalTokens: 80 }
    expect(DpBudget.update(DpBudget.empty(2), [l]).totalRequests).toEqual([0, 5])
    const d = DpBudget.dispatch(DpBudget.empty(2), "TOTAL_TOKENS", 100)
    expect(d).toEqual({
      rank: 0,
      budget: { totalRequests: [1, 0], totalTokens: [100, 0], lastTimestamp: [0, 0] }
    })
    expect(DpBudget.charge(DpBudget.empty(2), 1, 7).totalTokens).toEqual([0, 7])
  })
  it("DpBudget.filled / argminRequests / argminTokens", () => {
    expect(DpBudget.filled(3, 0)).toEqual([0, 0, 0])
    const z = [0, 0, 0]
    expect(DpBudget.argminRequests({ totalRequests: [3, 1, 1], totalTokens: z, lastTimestamp: z })).toBe(1)
    expect(
      DpBudget.argminTokens({ totalRequests: [3, 2, 1], totalTokens: [5, 5, 9], lastTimestamp: z })
    ).toBe(1)
  })
  it("DpController.publish / readAll / setStatus / refreshesOnDispatch", () => {
    const s = DpController.publish(DpController.init("TOTAL_REQUESTS", 2), [load(1, 3, 1, 0, 9)])
    expect(DpController.readAll(s).map((l) => l.dpRank)).toEqual([1])
    expect(s.budget).toEqual(DpBudget.empty(2))
    expect(DpController.setStatus(DpController.init("ROUND_ROBIN", 2), [true]).applied).toBe(false)
    expect(DpController.refreshesOnDispatch("ROUND_ROBIN")).toBe(false)
  })
  it("DpController.dispatchRequest / dispatchBatch", () => {
    const out = DpController.dispatchRequest(
      DpController.init("TOTAL_TOKENS", 2),
      req(5, { routedDpRank: 7 }),
      1
    )
    expect([out.refreshed, out.rank, out.error?.reason, out.state.lastRefreshTimeSeconds]).toEqual([
      true,
      undefined,
      "InvalidRoutedRank",
      1
    ])
    const reqs = [5, 5, 5].map((n) => req(n))
    expect(DpController.dispatchBatch(DpController.init("TOTAL_REQUESTS", 2), reqs, 1).ranks).toEqual([
      0, 1, 0
    ])
  })
  it("sglangPolicies by method", () => {
    expect(sglangPolicies.TOTAL_TOKENS.name).toBe("total-tokens")
  })
  it("DpController.init and refresh", () => {
    const s = DpController.init("TOTAL_TOKENS", 4)
    expect([s.lastRefreshTimeSeconds, s.roundRobinCounter, s.shm]).toEqual([
      0,
      0,
      [undefined, undefined, undefined, undefined]
    ])
    const r = DpController.init("TOTAL_REQUESTS", 2)
    expect(DpController.refresh(r, 0.01).refreshed).toBe(false)
    expect(DpController.refresh(r, 0.02).refreshed).toBe(true)
  })
  it("totalTokens charges the prompt to the chosen rank", () => {
    const a = totalTokens.route(totalTokens.init(2), req(4096), 1)
    if (isPolicyError(a)) throw new Error(a.message)
    expect(a.rank).toBe(0)
    expect(totalTokens.route(a.state, req(1), 1.001)).toMatchObject({ rank: 1 })
  })
  it("rejects a non-finite now and an invalid prompt length as typed errors", () => {
    expect(totalRequests.route(totalRequests.init(2), req(1), Number.NaN)).toMatchObject({ field: "now" })
    for (const bad of [-1, 1.5, Number.NaN])
      expect(totalTokens.route(totalTokens.init(2), req(bad), 1)).toMatchObject({
        reason: "InvalidInput",
        field: "inputLength"
      })
  })
  it("a failing route that refreshed returns the refreshed state on the error", () => {
    const e = totalTokens.route(totalTokens.init(2), req(1, { routedDpRank: 5 }), 1)
    expect(e).toMatchObject({ _tag: "PolicyError", reason: "InvalidRoutedRank", field: "routedDpRank" })
    expect(isPolicyError(e) && (e.state as State).lastRefreshTimeSeconds).toBe(1)
    const throttled = totalTokens.route(totalTokens.init(2), req(1, { routedDpRank: 5 }), 0.01)
    expect(isPolicyError(throttled) && throttled.state).toBeUndefined()
  })
  it("roundRobin honours status", () => {
    const s = roundRobin.setStatus(roundRobin.init(3), [true, false, true])
    expect(routeAll(roundRobin, s, [req(1), req(1), req(1)], () => 1).ranks).toEqual([0, 2, 0])
  })
  it("followBootstrapRoom 2^64 + 7 over 4 ranks", () => {
    const r = followBootstrapRoom.route(
      followBootstrapRoom.init(4),
      req(1, { bootstrapRoom: 18446744073709551623n }),
      1
    )
    expect(!isPolicyError(r) && r.rank).toBe(3)
  })
  it("totalRequests picks the rank with fewer requests after the first refresh", () => {
    const s = totalRequests.observe(totalRequests.init(2), [load(0, 5, 3, 0, 10), load(1, 5, 1, 0, 99)], 1)
    const r = totalRequests.route(s, req(10), 1)
    expect(!isPolicyError(r) && r.rank).toBe(1)
  })
  it("DpController.refresh at 0.01 / 0.02 and schedule of room -1", () => {
    const s = DpController.init("FOLLOW_BOOTSTRAP_ROOM", 4)
    const r = DpController.schedule(s, req(1, { bootstrapRoom: "-1" }))
    expect("rank" in r && r.rank).toBe(3)
  })
})

describe("fault cases", () => {
  it("S05 total_tokens budget charges in-flight tokens between snapshots: 16 x 4096 over DP=4 spread 4/4/4/4", () => {
    // A snapshot of 10000 tokens per rank, refreshed at t = 1.000 s; 16 requests within 0..5 ms, no
    // new snapshot in between (the next would come 50 ms later).
    let s = totalTokens.observe(
      totalTokens.init(4),
      [0, 1, 2, 3].map((r) => load(r, 100, 0, 0, 10000)),
      1
    )
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 16; i++) {
      const out = totalTokens.route(s, req(4096), 1 + i * (0.005 / 15))
      if (isPolicyError(out)) throw new Error(out.message)
      expect(out.explanation.refreshed).toBe(i === 0)
      // the policy's load for the chosen rank is 10000 + 4096 k after k dispatches to it
      expect(out.explanation.scores?.[out.rank]).toBe(10000 + 4096 * counts[out.rank]!)
      counts[out.rank]! += 1
      s = out.state
    }
    expect(counts).toEqual([4, 4, 4, 4]) // buggy reference (no in-flight charge): 16/0/0/0
    expect(s.budget.totalTokens).toEqual([26384, 26384, 26384, 26384])
  })

  it("S08 policy input: an unknown load (parse error, -1 or NaN) falls back to request counts and is never chosen for it", () => {
    // w1 (rank 0): load = parse error, in-flight 10; w2 (rank 1): load 5000, in-flight 2.
    for (const bad of [-1, Number.NaN, 1.5]) {
      const s = totalTokens.observe(totalTokens.init(2), [load(0, 7, 10, 0, bad), load(1, 7, 2, 0, 5000)], 1)
      const out = totalTokens.route(s, req(100), 1)
      if (isPolicyError(out)) throw new Error(out.message)
      expect(out.rank).toBe(1) // buggy reference: -1 < 5000, so w1 is picked
      expect(out.explanation.scores).toEqual([10, 2]) // the request counts compared
      expect(out.state.budget.tokensUnknown).toEqual([true, false])
    }
  })

  it("S08 a later valid load clears the unknown mark and token comparison resumes", () => {
    const s0 = totalTokens.observe(totalTokens.init(2), [load(0, 7, 10, 0, -1), load(1, 7, 2, 0, 5000)], 1)
    const first = totalTokens.route(s0, req(100), 1)
    if (isPolicyError(first)) throw new Error(first.message)
    expect(first.rank).toBe(1)
    const s = totalTokens.observe(first.state, [load(0, 8, 10, 0, 100)], 1.01)
    const out = totalTokens.route(s, req(100), 1.05)
    expect(!isPolicyError(out) && out.rank).toBe(0)
    expect(!isPolicyError(out) && out.state.budget.tokensUnknown).toBeUndefined()
  })

  it("S16 rank-granular routing names a rank inside the engine: next request goes to rank 0, 1 or 3", () => {
    const text = readFileSync(
      new URL(
        "../../../fixtures/payloads/sglang_dp4_rank_snapshot__radixark_miles_pr2012.txt",
        import.meta.url
      ),
      "utf8"
    )
    const rows = [...text.matchAll(/dp_rank=(\d+)\s+num_running_reqs=(\d+)\s+num_queue_reqs=(\d+)/g)]
    expect(rows.length).toBe(4)
    const loads = rows.map((m) => load(Number(m[1]), 1, Number(m[2]), Number(m[3]), 0))
    expect(loads.reduce((a, l) => a + l.numRunningReqs + l.numWaitingReqs, 0)).toBe(12) // the engine-level view
    for (const policy of [totalRequests, totalTokens]) {
      const out = policy.route(policy.observe(policy.init(4), loads, 1), req(100), 1)
      if (isPolicyError(out)) throw new Error(out.message)
      expect([0, 1, 3]).toContain(out.rank) // buggy reference: rank 2 (engine-level, SGLang-internal choice)
      expect(out.explanation.details).toMatchObject({ budget: { totalRequests: [0, 0, 12, 0] } })
    }
  })
})
