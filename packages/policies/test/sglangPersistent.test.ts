/**
 * The TOTAL_REQUESTS / TOTAL_TOKENS policies keep a persistent state (a base budget plus the
 * charges routed since, with one shared totals cache; see `src/sglang/internal/ChargedState.ts`).
 * These tests hold it to the plain reference controller (`DpController`, which copies arrays) on
 * histories that branch: any earlier state may be routed from, observed or re-statused again, so
 * a cache that leaked between versions would show up as a wrong rank or budget.
 */
import { isDeepStrictEqual } from "node:util"
import {
  DpBudget,
  DpController,
  followBootstrapRoom,
  isPolicyError,
  type Policy,
  type RankLoad,
  type RouteRequest,
  totalRequests,
  totalTokens
} from "@loadledger/policies"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

type State = DpController.DpControllerState

/** One step of a history: act on the state made by an earlier step (`from`, modulo their number). */
type Op =
  | { readonly kind: "route"; readonly from: number; readonly req: RouteRequest; readonly dt: number }
  | { readonly kind: "observe"; readonly from: number; readonly loads: ReadonlyArray<RankLoad> }
  | { readonly kind: "status"; readonly from: number; readonly status: ReadonlyArray<boolean> }

/**
 * Ops on `dpSize` ranks (3 ranks scan; 20 ranks use the tournament tree of the totals cache). With
 * `oneWindow`, every route is at the same time as its state, so no route refreshes and every state
 * shares one base: the cache then moves between siblings, ancestors and copies.
 */
const opArb = (dpSize: number, oneWindow = false): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("route" as const),
        from: fc.nat(),
        req: fc.record({
          requestId: fc.constant("r"),
          inputLength: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constant(-1)),
          routedDpRank: fc.option(fc.integer({ min: -1, max: dpSize }), { nil: undefined })
        }),
        dt: oneWindow
          ? fc.constant(0)
          : fc.oneof(
              fc.constant(0),
              fc.constant(0.005),
              fc.constant(0.02),
              fc.double({ min: -0.05, max: 0.1, noNaN: true })
            )
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("observe" as const),
        from: fc.nat(),
        loads: fc.array(
          fc.oneof(
            {
              weight: 4,
              arbitrary: fc.record({
                dpRank: fc.integer({ min: 0, max: dpSize - 1 }),
                timestamp: fc.integer({ min: 0, max: 4 }),
                numRunningReqs: fc.integer({ min: 0, max: 9 }),
                numWaitingReqs: fc.integer({ min: 0, max: 9 }),
                numTotalTokens: fc.oneof(fc.integer({ min: 0, max: 9000 }), fc.constant(-1))
              })
            },
            {
              // absent fields and timestamps, unknown rows: the ledger contract's other rows
              weight: 1,
              arbitrary: fc.record(
                {
                  dpRank: fc.integer({ min: 0, max: dpSize - 1 }),
                  timestamp: fc.integer({ min: 0, max: 4 }),
                  numRunningReqs: fc.integer({ min: 0, max: 9 }),
                  numWaitingReqs: fc.integer({ min: 0, max: 9 }),
                  numTotalTokens: fc.integer({ min: 0, max: 9000 }),
                  unknown: fc.constant({ reason: "stale" as const, message: "test" })
                },
                { requiredKeys: ["dpRank"] }
              )
            }
          ),
          { maxLength: 3 }
        )
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("status" as const),
        from: fc.nat(),
        status: fc.array(fc.boolean(), { minLength: dpSize, maxLength: dpSize })
      })
    }
  )

/** The reference: the plain controller, as `DpController` documents it. */
const referenceRoute = (s: State, req: RouteRequest, now: number) => {
  const out = DpController.dispatchRequest(s, req, now)
  return out.error === undefined
    ? { rank: out.rank, state: out.state, refreshed: out.refreshed }
    : { error: out.error.reason, state: out.state }
}

const plain = (s: State) => ({
  budget: s.budget,
  roundRobinCounter: s.roundRobinCounter,
  lastRefreshTimeSeconds: s.lastRefreshTimeSeconds,
  status: s.status,
  shm: s.shm
})

/**
 * Replays `ops` on `policy` and on the reference side by side; returns the first mismatch. Every
 * state is compared with its twin after the steps `inspect` picks and at the end (a budget, once
 * read, is memoized, so reading every state at every step would leave some paths untried).
 */
const replay = (
  policy: Policy<State>,
  dpSize: number,
  ops: ReadonlyArray<Op>,
  inspect: ReadonlyArray<boolean>
): string | undefined => {
  const method = policy === totalTokens ? "TOTAL_TOKENS" : "TOTAL_REQUESTS"
  const mine: Array<State> = [policy.init(dpSize)]
  const ref: Array<State> = [DpController.init(method, dpSize)]
  const times: Array<number> = [0]
  for (const [i, op] of ops.entries()) {
    const k = op.from % mine.length
    const s = mine[k]!
    const r = ref[k]!
    if (op.kind === "observe") {
      mine.push(policy.observe(s, op.loads, times[k]!))
      ref.push(DpController.publish(r, op.loads, times[k]!))
      times.push(times[k]!)
    } else if (op.kind === "status") {
      mine.push(policy.setStatus(s, op.status))
      ref.push(DpController.setStatus(r, op.status).state)
      times.push(times[k]!)
    } else {
      const now = times[k]! + op.dt
      const got = policy.route(s, op.req, now)
      const want = referenceRoute(r, op.req, now)
      if (isPolicyError(got)) {
        if (want.error !== got.reason)
          return `op ${i}: error ${got.reason}, reference ${want.error ?? want.rank}`
        // a request rejected after a refresh still consumed the refresh window
        const next = (got.state as State | undefined) ?? s
        mine.push(next)
        ref.push(want.state)
      } else {
        if (want.rank !== got.rank) return `op ${i}: rank ${got.rank}, reference ${want.rank}`
        if (got.explanation.refreshed !== want.refreshed)
          return `op ${i}: refreshed ${got.explanation.refreshed}, reference ${want.refreshed}`
        // the explanation's budget is the budget routed against, after the refresh
        const routedAgainst = want.refreshed ? DpController.refresh(r, now).state.budget : r.budget
        if (!isDeepStrictEqual(got.explanation.details?.["budget"], routedAgainst))
          return `op ${i}: explanation budget ${JSON.stringify(got.explanation.details?.["budget"])}`
        mine.push(got.state)
        ref.push(want.state)
      }
      times.push(now)
    }
    // every state made so far, old ones included, still reads as its reference twin
    if (inspect[i] === true || i === ops.length - 1)
      for (let j = 0; j < mine.length; j++)
        if (!isDeepStrictEqual(plain(mine[j]!), plain(ref[j]!)))
          return `op ${i}: state ${j} is ${JSON.stringify(plain(mine[j]!))}, reference ${JSON.stringify(plain(ref[j]!))}`
  }
  return undefined
}

describe("persistent budget state (TOTAL_REQUESTS, TOTAL_TOKENS)", () => {
  for (const policy of [totalRequests, totalTokens])
    for (const dpSize of [3, 20])
      for (const oneWindow of [false, true])
        it(`${policy.name}, ${dpSize} ranks${oneWindow ? ", one refresh window" : ""}: branching histories match the reference controller, old states unchanged`, () => {
          fc.assert(
            fc.property(
              fc.array(opArb(dpSize, oneWindow), { maxLength: 40 }),
              fc.array(fc.boolean()),
              (ops, inspect) => {
                // in one window, check every new state at once: a wrong cache move shows at the next read
                const mismatch = replay(policy, dpSize, ops, oneWindow ? ops.map(() => true) : inspect)
                if (mismatch !== undefined) throw new Error(mismatch)
              }
            ),
            { numRuns: 300 }
          )
        })

  it("routing from an older sibling after a newer one moves the cache back (retry, fan-out)", () => {
    const route = (op: { from: number; inputLength: number }): Op => ({
      kind: "route",
      from: op.from,
      req: { requestId: "r", inputLength: op.inputLength },
      dt: 0
    })
    for (const dpSize of [3, 20]) {
      const ops = [
        route({ from: 0, inputLength: 100 }), // state 1
        route({ from: 0, inputLength: 5000 }), // state 2, a sibling of 1
        route({ from: 1, inputLength: 7 }), // from 1 while the cache is at 2
        route({ from: 2, inputLength: 9 }), // and back
        { kind: "status", from: 3, status: Array.from({ length: dpSize }, (_, i) => i > 0) } as Op, // a copy of 3
        route({ from: 5, inputLength: 11 }), // from the copy
        route({ from: 3, inputLength: 13 }) // from the original again
      ]
      for (const policy of [totalRequests, totalTokens])
        expect(
          replay(
            policy,
            dpSize,
            ops,
            ops.map(() => true)
          )
        ).toBeUndefined()
    }
  })

  it("a long burst folds its charges into a new base without changing any earlier state", () => {
    // 3 ranks fold after 1024 charges (max(1024, 2 * ranks)); route 2500 requests inside one refresh window
    let s: State = totalTokens.observe(
      totalTokens.init(3),
      [{ dpRank: 1, timestamp: 1, numRunningReqs: 5, numWaitingReqs: 0, numTotalTokens: 40 }],
      0
    )
    let r: State = DpController.publish(DpController.init("TOTAL_TOKENS", 3), [
      { dpRank: 1, timestamp: 1, numRunningReqs: 5, numWaitingReqs: 0, numTotalTokens: 40 }
    ])
    const kept: Array<[State, State]> = []
    for (let i = 0; i < 2500; i++) {
      const req = { requestId: `r${i}`, inputLength: 1 + ((i * 37) % 100) }
      const got = totalTokens.route(s, req, 1)
      const want = DpController.dispatchRequest(r, req, 1)
      if (isPolicyError(got)) throw new Error(got.message)
      expect(got.rank).toBe(want.rank)
      s = got.state
      r = want.state
      if (i % 200 === 0 || (i >= 1023 && i <= 1026) || (i >= 2047 && i <= 2050)) kept.push([s, r])
    }
    expect(s.budget).toEqual(r.budget)
    for (const [a, b] of kept) expect(a.budget).toEqual(b.budget)
    // route again from a state before the folds: the same answer as the reference gives
    const [oldMine, oldRef] = kept[1]!
    const again = totalTokens.route(oldMine, { requestId: "x", inputLength: 10 }, 1)
    const want = DpController.dispatchRequest(oldRef, { requestId: "x", inputLength: 10 }, 1)
    expect(!isPolicyError(again) && again.rank).toBe(want.rank)
    expect(!isPolicyError(again) && again.state.budget).toEqual(want.state.budget)
  })

  it("the explanation of the route that folds is the budget routed against", () => {
    let s: State = totalRequests.init(2)
    let before: State = s
    for (let i = 0; i < 1025; i++) {
      const out = totalRequests.route(s, { requestId: `r${i}`, inputLength: 1 }, 1)
      if (isPolicyError(out)) throw new Error(out.message)
      if (i === 1024) {
        expect(out.explanation.details?.["budget"]).toEqual(before.budget)
        expect(out.explanation.scores).toEqual(before.budget.totalRequests)
        expect(out.explanation.refreshed).toBe(false)
      }
      before = s = out.state
    }
    expect(s.budget.totalRequests).toEqual([513, 512])
  })

  it("a spread or structuredClone of a policy state gets a typed error naming the field, not a throw", () => {
    for (const policy of [totalRequests, totalTokens]) {
      const s = policy.route(policy.init(2), { requestId: "a", inputLength: 1 }, 1)
      if (isPolicyError(s)) throw new Error(s.message)
      for (const copy of [
        { ...s.state },
        structuredClone(s.state),
        { ...s.state, budget: DpBudget.empty(2) }
      ]) {
        const out = policy.route(copy as State, { requestId: "b", inputLength: 1 }, 1)
        expect(isPolicyError(out) && [out.reason, out.field]).toEqual(["InvalidInput", "state"])
        // observe and setStatus leave such a state as it is, for route to report
        expect(policy.observe(copy as State, [], 1)).toBe(copy)
        expect(policy.setStatus(copy as State, [true, true])).toBe(copy)
      }
    }
  })

  it("no ranks, a negative or a NaN rank count: NoRanks, as the reference", () => {
    for (const policy of [totalRequests, totalTokens, followBootstrapRoom])
      for (const dpSize of [0, -1, Number.NaN]) {
        const out = policy.route(
          policy.init(dpSize),
          { requestId: "a", inputLength: 1, bootstrapRoom: "7" },
          1
        )
        expect(isPolicyError(out) && out.reason).toBe("NoRanks")
      }
  })

  it("a plain DpControllerState is accepted and gives the reference result", () => {
    const plainState = DpController.publish(DpController.init("TOTAL_REQUESTS", 2), [
      { dpRank: 0, timestamp: 1, numRunningReqs: 4, numWaitingReqs: 0, numTotalTokens: 0 }
    ])
    const out = totalRequests.route(plainState, { requestId: "a", inputLength: 1 }, 1)
    expect(!isPolicyError(out) && [out.rank, out.state.budget.totalRequests]).toEqual([1, [4, 1]])
  })

  it("JSON.stringify writes a result as a result and a state as a plain DpControllerState", () => {
    const s = totalTokens.observe(
      totalTokens.init(2),
      [{ dpRank: 0, timestamp: 1, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }],
      0
    )
    const out = totalTokens.route(s, { requestId: "a", inputLength: 5 }, 1)
    if (isPolicyError(out)) throw new Error(out.message)
    const plainAfter = {
      method: "TOTAL_TOKENS",
      dpSize: 2,
      budget: { totalRequests: [1, 1], totalTokens: [9, 5], lastTimestamp: [1, 0] },
      roundRobinCounter: 0,
      lastRefreshTimeSeconds: 1,
      status: [true, true],
      shm: [{ dpRank: 0, timestamp: 1, numRunningReqs: 1, numWaitingReqs: 0, numTotalTokens: 9 }, null]
    }
    // a budget route's result is also its new state (`out.state === out`): it serializes as a result
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      _tag: "Routed",
      rank: 1,
      state: plainAfter,
      explanation: {
        scores: [9, 0],
        tieBreak: "lowest index among minimal (totalTokens, totalRequests)",
        refreshed: true,
        details: {
          method: "TOTAL_TOKENS",
          budget: { totalRequests: [1, 0], totalTokens: [9, 0], lastTimestamp: [1, 0] }
        }
      }
    })
    // a state that is not a route result (init, observe, setStatus) serializes as the plain state
    const statused = totalTokens.setStatus(out.state, [true, false])
    expect(JSON.parse(JSON.stringify(statused))).toEqual({ ...plainAfter, status: [true, false] })
    expect(DpBudget.argminTokens(out.state.budget)).toBe(1)
  })

  it("an explanation is plain data: structural equality sees its scores and budget", () => {
    let s: State = totalTokens.init(2)
    const explanations: Array<unknown> = []
    for (let i = 0; i < 3; i++) {
      const out = totalTokens.route(s, { requestId: `r${i}`, inputLength: 4096 }, 1)
      if (isPolicyError(out)) throw new Error(out.message)
      explanations.push(out.explanation)
      s = out.state
    }
    expect(isDeepStrictEqual(explanations[1], explanations[2])).toBe(false)
    expect(explanations.map((e) => (e as { scores: unknown }).scores)).toEqual([
      [0, 0],
      [4096, 0],
      [4096, 4096]
    ])
  })
})
