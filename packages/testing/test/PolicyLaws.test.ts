import {
  followBootstrapRoom,
  isPolicyError,
  type Policy,
  type RankLoad,
  type RouteRequest,
  roundRobin,
  totalRequests,
  totalTokens
} from "@loadledger/policies"
import { policyLaws } from "@loadledger/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const load = (dpRank: number, running: number, tokens = 1000): RankLoad => ({
  dpRank,
  timestamp: 5,
  numRunningReqs: running,
  numWaitingReqs: 0,
  numTotalTokens: tokens
})
const req = (extra: Partial<RouteRequest> = {}): RouteRequest => ({
  requestId: "q",
  inputLength: 100,
  ...extra
})
/** First decision after observing `loads` with health `status`, at t = 1 s. */
const decide = <S>(
  policy: Policy<S>,
  loads: ReadonlyArray<RankLoad>,
  status: ReadonlyArray<boolean>,
  r: RouteRequest = req()
) => {
  const s = policy.observe(policy.setStatus(policy.init(loads.length), status), loads, 1)
  const out = policy.route(s, r, 1)
  return isPolicyError(out) ? out.reason : out.rank
}

// FOLLOW_BOOTSTRAP_ROOM with random rooms (64-bit, negative included), as the simulator uses it.
const withRoom = {
  request: fc.record({
    requestId: fc.uuid(),
    inputLength: fc.integer({ min: 1, max: 8192 }),
    bootstrapRoom: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n }).map(String)
  })
}
const sglang = [
  ["roundRobin", roundRobin, {}],
  ["followBootstrapRoom", followBootstrapRoom, withRoom],
  ["totalRequests", totalRequests, {}],
  ["totalTokens", totalTokens, {}]
] as const

describe.each(sglang)("policy laws: SGLang %s", (_name, policy, arbs) => {
  const laws = policyLaws(policy, arbs)
  it("valid rank or typed error, never an exception", () => fc.assert(laws.validRankOrTypedError))
  it("deterministic", () => fc.assert(laws.deterministic))
  it("adding load never makes a rank more preferred", () => fc.assert(laws.monotoneInLoad))
  it("breaks permutation equivariance on purpose: ties / counter / room go to a fixed index", () => {
    // relabelling ranks 0 <-> 1 with equal loads: upstream still picks rank 0, not the relabelled 1
    const equal = [load(0, 3), load(1, 3)]
    expect(decide(policy, equal, [true, true], req({ bootstrapRoom: "0" }))).toBe(0)
    expect(fc.check(laws.permutationEquivariant).failed).toBe(true)
  })
})

describe("policy laws: status", () => {
  it("roundRobin never picks an unhealthy rank", () => fc.assert(policyLaws(roundRobin).healthyRanksOnly))
  it.each([
    ["totalRequests", totalRequests, {}],
    ["totalTokens", totalTokens, {}],
    ["followBootstrapRoom", followBootstrapRoom, withRoom]
  ] as const)(
    "%s ignores status as upstream does (counterexample: rank 0 down, still chosen)",
    (_n, policy, arbs) => {
      expect(decide(policy, [load(0, 3), load(1, 3)], [false, true], req({ bootstrapRoom: "0" }))).toBe(0)
      expect(fc.check(policyLaws(policy, arbs).healthyRanksOnly).failed).toBe(true)
    }
  )
})

describe("policy laws: burst against equal stale snapshots", () => {
  it.each([
    ["roundRobin", roundRobin],
    ["totalRequests", totalRequests],
    ["totalTokens", totalTokens]
  ] as const)("%s spreads with max - min <= 1", (_n, policy) => {
    fc.assert(policyLaws(policy).burstSpread)
  })
  it("followBootstrapRoom is not load-aware: one room sends a whole burst to one rank", () => {
    let s = followBootstrapRoom.init(2)
    const ranks: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const out = followBootstrapRoom.route(s, req({ bootstrapRoom: "4" }), 1 + i * 1e-4)
      if (isPolicyError(out)) throw new Error(out.message)
      ranks.push(out.rank)
      s = out.state
    }
    expect(ranks).toEqual([0, 0, 0, 0])
    expect(fc.check(policyLaws(followBootstrapRoom, withRoom).burstSpread).failed).toBe(true)
  })
})

// The laws must be able to fail: each broken policy below violates exactly what its law checks.
interface Toy {
  readonly n: number
  readonly running: Array<number>
  counter: number
}
const toy = (route: (s: Toy, r: RouteRequest) => number): Policy<Toy> => ({
  name: "toy",
  init: (n) => ({ n, running: new Array<number>(n).fill(0), counter: 0 }),
  observe: (s, loads) => ({
    ...s,
    running: s.running.map((v, r) => loads.find((l) => l.dpRank === r)?.numRunningReqs ?? v)
  }),
  route: (s, r) => ({ _tag: "Routed", rank: route(s, r), state: s, explanation: {} }),
  finish: (s) => s,
  setStatus: (s) => s
})
const argmax = (xs: ReadonlyArray<number>) => xs.indexOf(Math.max(...xs))

describe("policy laws detect broken policies", () => {
  it("a rank out of range", () => {
    expect(fc.check(policyLaws(toy((s) => s.n)).validRankOrTypedError).failed).toBe(true)
  })
  it("an exception", () => {
    const throwing = toy(() => {
      throw new Error("boom")
    })
    expect(fc.check(policyLaws(throwing).validRankOrTypedError).failed).toBe(true)
  })
  it("a hidden mutation of the state", () => {
    const mutating = toy((s) => {
      s.counter += 1
      return s.counter % s.n
    })
    expect(fc.check(policyLaws(mutating).deterministic).failed).toBe(true)
  })
  it("preferring the most loaded rank", () => {
    const maxLoad = toy((s) => argmax(s.running))
    expect(fc.check(policyLaws(maxLoad).monotoneInLoad).failed).toBe(true)
  })
  it("a stale-snapshot pile-up (no in-flight charge: S05's buggy reference)", () => {
    const sticky = toy((s) => s.running.indexOf(Math.min(...s.running)))
    expect(fc.check(policyLaws(sticky).burstSpread).failed).toBe(true)
  })
})

describe("docstring example", () => {
  it("policyLaws(totalRequests)", () => {
    const laws = policyLaws(totalRequests)
    fc.assert(laws.burstSpread)
    expect(fc.check(laws.permutationEquivariant).failed).toBe(true)
  })
})
