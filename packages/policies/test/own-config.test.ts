import { describe, expect, it } from "vitest"
import {
  findPolicy,
  makeVllmLb,
  ownPolicyConfigs,
  ownPolicyEntries,
  type Policy,
  policyFromConfig,
  totalRequests,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { chargeColumns } from "../src/own/internal/InflightCharges.js"

const rows = [0, 1, 2].map((dpRank) => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: dpRank,
  numWaitingReqs: 0,
  numTotalTokens: 100 * (3 - dpRank),
  kvAvailableTokens: dpRank === 0 ? 10 : 5000
}))

/** Ranks chosen for a few requests on the same rows. */
const ranksOf = (p: Policy<unknown>): Array<number | string> => {
  let s = p.observe(p.init(3), rows, 1)
  const out: Array<number | string> = []
  for (let i = 0; i < 6; i++) {
    const r = p.route(
      s,
      { requestId: `r${i}`, inputLength: 40 * (i + 1), prefixHashes: ["a", `b${i % 2}`] },
      1
    )
    if (r._tag !== "Routed") {
      out.push(r.reason)
      continue
    }
    out.push(r.rank)
    s = r.state
  }
  return out
}

describe("policyFromConfig", () => {
  it("every registered own policy has a configuration, and the configuration (through JSON) decides as the entry", () => {
    expect(Object.keys(ownPolicyConfigs).sort()).toEqual(ownPolicyEntries.map((e) => e.name).sort())
    for (const e of ownPolicyEntries) {
      const json = JSON.parse(JSON.stringify(ownPolicyConfigs[e.name]))
      for (const o of [{}, { clientCount: 2, clientIndex: 1, seed: 3 }]) {
        const p = policyFromConfig(json, o)
        if ("_tag" in p) throw new Error(`${e.name}: ${p.message}`)
        expect([e.name, ranksOf(p)]).toEqual([e.name, ranksOf(e.make(o))])
      }
    }
  })

  it("a weight changes the decision: the terms are what the policy weighs", () => {
    const base = { kind: "scored", terms: [{ term: "tokens", weight: 1 }] }
    const withQueue = {
      kind: "scored",
      terms: [
        { term: "tokens", weight: 1 },
        { term: "requests", weight: 3 }
      ]
    }
    const a = policyFromConfig(base) as Policy<unknown>
    const b = policyFromConfig(withQueue) as Policy<unknown>
    // rank 0's free KV cannot hold the prompt; tokens 200/100 favour rank 2 (min-max 1, 0), requests
    // 1/2 at weight 3 favour rank 1 (1 + 0 against 0 + 3)
    expect(ranksOf(a)[0]).toBe(2)
    expect(ranksOf(b)[0]).toBe(1)
  })

  it("bad configurations are a typed error naming the field", () => {
    const fieldOf = (c: unknown) => {
      const p = policyFromConfig(c)
      return "_tag" in p ? p.field : "built"
    }
    expect(fieldOf(null)).toBe("config")
    expect(fieldOf({ kind: "scoring", terms: [] })).toBe("kind")
    expect(fieldOf({ kind: "scored" })).toBe("terms")
    expect(fieldOf({ kind: "scored", terms: [] })).toBe("terms")
    expect(
      fieldOf({
        kind: "scored",
        terms: [
          { term: "tokens", weight: 1 },
          { term: "x", weight: 1 }
        ]
      })
    ).toBe("terms[1].term")
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: Number.NaN }] })).toBe(
      "terms[0].weight"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: "1" }] })).toBe("terms[0].weight")
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1, normalise: "z" }] })).toBe(
      "terms[0].normalise"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1, kvFull: 0.5 }] })).toBe(
      "terms[0].kvFull"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1, wieght: 2 }] })).toBe(
      "terms[0].wieght"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], tieBreakers: ["nope"] })).toBe(
      "tieBreakers[0]"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], choices: 2 })).toBe("choices")
    expect(fieldOf({ kind: "power-of-choices", terms: [{ term: "tokens", weight: 1 }], choices: 0 })).toBe(
      "choices"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], staleAfterSeconds: 0 })).toBe(
      "staleAfterSeconds"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], wrappers: ["x"] })).toBe(
      "wrappers[0]"
    )
    expect(fieldOf({ kind: "scored", terms: [{ term: "tokens", weight: 1 }], colour: "red" })).toBe("colour")
    expect(fieldOf({ kind: "step-time", terms: [{ term: "tokens", weight: 1 }] })).toBe("terms[0].term")
    expect(fieldOf({ kind: "step-time", terms: [{ term: "ownPrefill", weight: 2 }] })).toBe("terms[0].weight")
    expect(fieldOf({ kind: "step-time", terms: [{ term: "decodeLoad", weight: 2 }] })).toBe("built")
    expect(fieldOf({ kind: "upstream" })).toBe("policy")
    expect(fieldOf({ kind: "cache-affinity", terms: [] })).toBe("terms")
  })

  it("step-time weights reach the policy (decodeLoad is decodeWeight)", () => {
    const p = policyFromConfig({
      kind: "step-time",
      terms: [{ term: "decodeLoad", weight: 0 }]
    }) as Policy<unknown>
    const r = p.route(p.observe(p.init(3), rows, 1), { requestId: "a", inputLength: 10 }, 1)
    const terms = r._tag === "Routed" ? (r.explanation.details?.["terms"] as Array<number>) : []
    // decode term of every rank 0 (the default with one front end would be 8 decode steps)
    expect([terms[2], terms[7], terms[12]]).toEqual([0, 0, 0])
  })
})

describe("one in-flight ledger under the wrappers", () => {
  it("withKvAdmission(withStaleness(p)) reads the staleness ledger, tracking each request once", () => {
    const p = withKvAdmission(withStaleness(makeVllmLb({ clientCount: 2 }), { clientCount: 2 }), {
      clientCount: 2
    })
    const s = p.observe(p.init(3), rows, 1)
    expect(s.ledger).toBeUndefined()
    const r = p.route(s, { requestId: "a", inputLength: 100 }, 1)
    expect(r._tag === "Routed" && chargeColumns(p.inflightLedger.of(r.state)).tokens).toEqual(
      r._tag === "Routed" ? [0, 1, 2].map((k) => (k === r.rank ? 200 : 0)) : []
    )
  })
  it("with a different charge scale the wrapper keeps its own ledger", () => {
    const p = withKvAdmission(withStaleness(totalRequests, { clientCount: 2 }))
    expect(p.init(3).ledger).toBeDefined()
  })
  it("the registered staleness + admission entry shares one ledger", () => {
    const p = findPolicy("vllm-kv-pressure+staleness+kv-admission")!.make({ clientCount: 4 })
    expect((p.init(2) as { ledger: unknown }).ledger).toBeUndefined()
  })
})
