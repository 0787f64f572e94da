// The pinned-rank law over the whole registry: the policies that place a pinned request elsewhere
// today are listed exactly (a new one fails here), and smg/cache-aware, fixed, honours the pin.
import { findPolicy, policyEntries } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { pinnedRankViolations } from "../src/index.js"

/** Peers' routers that, as modelled, pick by their own rule whatever rank a request is pinned to. */
const ignoresPin = [
  // prefix-hash at the smg-project head: a request without tokens (the law's) goes to the least
  // loaded (#2148); v1.9.0 refused it (`no_tokens`), so it is not listed
  ...["round-robin", "random", "power-of-two", "least-load", "prefix-hash", "dp-min-token"].map(
    (n) => `smg/${n}`
  ),
  ...["roundrobin", "session", "prefixaware", "loadaware"].map((n) => `production-stack/${n}`),
  ...[
    "profile",
    "profile-load-aware",
    "queue-scorer",
    "kv-cache-utilization-scorer",
    "running-requests-size-scorer",
    "load-aware-scorer",
    "active-request-scorer",
    "token-load-scorer",
    "prefix-cache-scorer",
    "weighted-random-picker",
    "utilization-detector"
  ].map((n) => `llm-d/${n}`),
  ...[
    "least-request",
    "throughput",
    "least-kv-cache",
    "least-gpu-cache",
    "least-busy-time",
    "least-latency",
    "random",
    "prefix-cache",
    "power-of-two",
    "least-utilization",
    "slo",
    "slo-least-load-pulling",
    "slo-least-load",
    "slo-pack-load",
    "load-balance",
    "multi"
  ].map((n) => `aibrix/${n}`)
]

describe("a pinned rank is honoured or refused, never replaced", () => {
  it("holds for every registered policy but the listed peers", () => {
    const breaking = policyEntries()
      .filter((e) => pinnedRankViolations(e.make({ seed: 1 })).length > 0)
      .map((e) => e.name)
    expect(breaking).toEqual(ignoresPin)
    expect(policyEntries().length - breaking.length).toBeGreaterThanOrEqual(19)
  })

  it("smg/cache-aware places a request pinned to rank 1 on rank 1 (it chose rank 0 before), and refuses an unhealthy or absent rank", () => {
    const p = findPolicy("smg/cache-aware")!.make({})
    const rows = [0, 1].map((dpRank) => ({
      dpRank,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: 0,
      kvCacheUsage: 0
    }))
    const s = p.observe(p.init(2), rows, 1)
    const r = p.route(s, { requestId: "a", inputLength: 8, routedDpRank: 1 }, 1)
    expect(r._tag === "Routed" && r.rank).toBe(1)
    const sick = p.setStatus!(s, [true, false])
    const refused = p.route(sick, { requestId: "b", inputLength: 8, routedDpRank: 1 }, 1)
    expect(refused._tag === "PolicyError" && [refused.reason, refused.field]).toEqual([
      "InvalidRoutedRank",
      "routedDpRank"
    ])
    expect(p.route(s, { requestId: "c", inputLength: 8, routedDpRank: 2 }, 1)._tag).toBe("PolicyError")
    // the pinned request is charged and released like any other
    if (r._tag === "Routed") expect(p.finish(r.state, ["a"], 2)).not.toBe(r.state)
  })
})
