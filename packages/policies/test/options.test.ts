// One rule for the options a policy is built with (issue: `clientIndex` past `clientCount`, NaN,
// `clientCount` 0 were accepted silently): `checkPolicyOptions` over the registry, whatever an entry
// reads, and `checkClientOptions` in every maker that takes `clientCount` / `clientIndex`. A
// policy built from a refused option answers every route (pinned, or bad in other ways too) with
// the option's `InvalidInput`; `init`, `observe`, `finish` and `setStatus` still run.
import { describe, expect, it } from "vitest"
import {
  checkClientOptions,
  checkPolicyOptions,
  glm53H200StepCost,
  makeLedgerBalanced,
  makePowerOfChoices,
  makeScored,
  makeStepTimeAware,
  makeUncachedTokens,
  makeVllmLb,
  ownPolicyEntries,
  type Policy,
  type PolicyOptions,
  ProductionStack,
  policyEntries,
  roundRobin,
  Scorers,
  Smg,
  totalRequests,
  totalTokens,
  VllmLb,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { errorOf, expectWholeRegistry, registryRequest, registryRows } from "./support/registryRequest.js"

const weird = "2" as unknown as number
// each refused for exactly one field, named here
const badOptions: ReadonlyArray<readonly [PolicyOptions, string]> = [
  [{ clientCount: 0 }, "clientCount"],
  [{ clientCount: -1, clientIndex: 0 }, "clientCount"],
  [{ clientCount: 1.5 }, "clientCount"],
  [{ clientCount: Number.NaN }, "clientCount"],
  [{ clientCount: Number.POSITIVE_INFINITY }, "clientCount"],
  [{ clientCount: 2 ** 53 }, "clientCount"],
  [{ clientCount: weird }, "clientCount"],
  [{ clientCount: 2, clientIndex: 2 }, "clientIndex"],
  [{ clientCount: 4, clientIndex: -1 }, "clientIndex"],
  [{ clientIndex: 1 }, "clientIndex"],
  [{ clientCount: 4, clientIndex: 0.5 }, "clientIndex"],
  [{ clientCount: 4, clientIndex: Number.NaN }, "clientIndex"],
  [{ clientCount: 4, clientIndex: Number.NEGATIVE_INFINITY }, "clientIndex"],
  [{ seed: Number.NaN }, "seed"],
  [{ seed: 1.5 }, "seed"],
  [{ seed: Number.POSITIVE_INFINITY }, "seed"],
  [{ maxRunningRequests: 0 }, "maxRunningRequests"],
  [{ maxRunningRequests: -3 }, "maxRunningRequests"],
  [{ maxRunningRequests: 2.5 }, "maxRunningRequests"],
  [{ maxRunningRequests: Number.NaN }, "maxRunningRequests"],
  [{ maxRunningRequests: Number.POSITIVE_INFINITY }, "maxRunningRequests"],
  [{ stepCost: { ...glm53H200StepCost, chunkTokens: 0 } }, "stepCost.chunkTokens"],
  [
    { stepCost: { ...glm53H200StepCost, extendSecondsPerToken: Number.NaN } },
    "stepCost.extendSecondsPerToken"
  ],
  [
    { stepCost: { ...glm53H200StepCost, decodeSecondsPerRequest: -1e-4 } },
    "stepCost.decodeSecondsPerRequest"
  ],
  [{ stepCost: "glm" as never }, "stepCost"]
]
const goodOptions: ReadonlyArray<PolicyOptions> = [
  {},
  { clientCount: 1, clientIndex: 0 },
  { clientCount: 2, clientIndex: 1 },
  { clientCount: 4, clientIndex: 3, seed: -7, maxRunningRequests: 64 },
  { seed: 2 ** 40, maxRunningRequests: 1, stepCost: glm53H200StepCost },
  { clientCount: undefined, clientIndex: undefined, seed: undefined, maxRunningRequests: undefined }
]

const rows = registryRows

/** Every route of `p` (unpinned, pinned, with a bad length, at a bad time) gives `expected`. */
const expectRefused = (p: Policy<unknown>, expected: ReturnType<typeof errorOf>, label: string) => {
  const s0 = p.init(4)
  const s1 = p.observe(s0, rows, 1)
  const s2 = p.finish(p.setStatus(s1, [true, true, false, true]), ["r"], 1)
  for (const s of [s0, s1, s2]) {
    expect(errorOf(p.route(s, registryRequest(10), 1.001)), label).toEqual(expected)
    expect(errorOf(p.route(s, registryRequest(10, 0), 1.001)), `${label} pinned`).toEqual(expected)
    expect(errorOf(p.route(s, registryRequest(1.5), Number.NaN)), `${label} bad request`).toEqual(expected)
  }
}

describe("checkClientOptions / checkPolicyOptions", () => {
  it("name the first field at fault, with the value refused", () => {
    expect(errorOf(checkClientOptions(0, 5))).toEqual({
      _tag: "PolicyError",
      reason: "InvalidInput",
      field: "clientCount",
      message: "clientCount must be an integer >= 1, got 0"
    })
    expect(checkClientOptions(3, 3)?.message).toBe("clientIndex must be an integer in 0..2, got 3")
    expect(checkClientOptions(undefined, 1)?.message).toBe("clientIndex must be an integer in 0..0, got 1")
    expect(checkClientOptions(weird, 0)?.message).toBe("clientCount must be an integer >= 1, got string")
    expect(checkPolicyOptions({ clientCount: 2, clientIndex: 7, seed: Number.NaN })?.field).toBe(
      "clientIndex"
    )
    expect(checkPolicyOptions({ seed: 0.5, maxRunningRequests: 0 })?.message).toBe(
      "seed must be a safe integer, got 0.5"
    )
    for (const [o, field] of badOptions) expect(checkPolicyOptions(o)?.field, JSON.stringify(o)).toBe(field)
    for (const o of goodOptions) expect(checkPolicyOptions(o), JSON.stringify(o)).toBeUndefined()
  })
})

describe("options: one rule over the registry", () => {
  it("every registered policy built from a refused option answers every route with its error; good options route", () => {
    const seen: Array<string> = []
    for (const entry of policyEntries()) {
      for (const [o, field] of badOptions) {
        const expected = errorOf(checkPolicyOptions(o))
        expect(expected.field).toBe(field)
        expectRefused(entry.make(o), expected, `${entry.name} ${JSON.stringify(o)}`)
      }
      for (const o of goodOptions) {
        const p = entry.make(o)
        expect(p.name).toBe(entry.make({}).name)
        const s = p.observe(p.init(4), rows, 1)
        expect(p.route(s, registryRequest(10), 1.001)._tag, `${entry.name} ${JSON.stringify(o)}`).toBe(
          "Routed"
        )
      }
      seen.push(entry.name)
    }
    expectWholeRegistry(seen, [
      "round-robin",
      "total-tokens",
      "vllm-kv-pressure",
      "ledger-balanced",
      "step-time-aware",
      "smg/dp-min-token",
      "llm-d/profile"
    ])
  })

  it("the exported ownPolicyEntries refuse them too", () => {
    for (const entry of ownPolicyEntries)
      expectRefused(
        entry.make({ maxRunningRequests: 0 }),
        errorOf(checkPolicyOptions({ maxRunningRequests: 0 })),
        entry.name
      )
  })
})

describe("options: every maker that takes clientCount / clientIndex refuses bad ones itself", () => {
  const makers: ReadonlyArray<
    readonly [string, (o: { clientCount?: number; clientIndex?: number }) => Policy<unknown>]
  > = [
    ["makeLedgerBalanced", (o) => makeLedgerBalanced(o) as Policy<unknown>],
    ["makeUncachedTokens", (o) => makeUncachedTokens(o) as Policy<unknown>],
    ["makeStepTimeAware", (o) => makeStepTimeAware(o) as Policy<unknown>],
    [
      "makeScored",
      (o) => makeScored({ ...o, scorers: [{ scorer: Scorers.tokens, weight: 1 }] }) as Policy<unknown>
    ],
    ["makePowerOfChoices", (o) => makePowerOfChoices(o) as Policy<unknown>],
    ["makeVllmLb", (o) => makeVllmLb(o) as Policy<unknown>]
  ]
  const clientBad = badOptions.filter(([, field]) => field === "clientCount" || field === "clientIndex")

  it("with the same error as the registry, and route with good ones", () => {
    for (const [name, make] of makers) {
      for (const [o] of clientBad)
        expectRefused(
          make(o),
          errorOf(checkClientOptions(o.clientCount, o.clientIndex)),
          `${name} ${JSON.stringify(o)}`
        )
      for (const o of [{ clientCount: 3, clientIndex: 2 }, {}]) {
        const p = make(o)
        expect(p.route(p.observe(p.init(4), rows, 1), registryRequest(10), 1.001)._tag, name).toBe("Routed")
      }
    }
  })

  it("withStaleness and withKvAdmission refuse a bad clientCount, before the inner policy's checks", () => {
    for (const wrap of [withStaleness, withKvAdmission] as const)
      for (const clientCount of [0, 1.5, Number.NaN, -2]) {
        const p = wrap(totalRequests, { clientCount }) as Policy<unknown>
        expectRefused(p, errorOf(checkClientOptions(clientCount, undefined)), `${wrap.name} ${clientCount}`)
      }
  })

  it("VllmLb.init reports the same errors", () => {
    for (const [o] of clientBad)
      expect(errorOf(VllmLb.init(4, o)), JSON.stringify(o)).toEqual(
        errorOf(checkClientOptions(o.clientCount, o.clientIndex))
      )
  })
})

describe("init with a rank count that is not an integer >= 0: every route refuses naming dpSize", () => {
  // before: 27 registered policies threw RangeError from inside init for 2.5, -1 or NaN, 7 routed
  // to rank 0 with 2.5, and the others answered NoRanks "dpSize is 0" for -1
  for (const entry of policyEntries())
    it(entry.name, () => {
      const p = entry.make({})
      for (const bad of [-1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, "8" as unknown as number]) {
        let s = p.init(bad)
        s = p.observe(s, [{ dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }], 1)
        s = p.setStatus(s, [true])
        s = p.finish(s, ["a"], 1)
        expect(p.route(s, { requestId: "a", inputLength: 10 }, 1)).toMatchObject({
          _tag: "PolicyError",
          reason: "InvalidInput",
          field: "dpSize",
          message: `dpSize must be an integer >= 0, got ${typeof bad === "string" ? JSON.stringify(bad) : String(bad)}`
        })
      }
    })
})

describe("values an error message cannot interpolate: a symbol or a null-prototype object", () => {
  // second fresh-user trial: every registered policy threw "Cannot convert a Symbol value to a string"
  it("inputLength, now and dpSize of such a value are typed errors naming the field, in all entries", () => {
    const odd: ReadonlyArray<unknown> = [Symbol("x"), Object.create(null)]
    for (const entry of policyEntries()) {
      const p = entry.make({})
      for (const x of odd) {
        const fields = [
          p.route(p.init(2), { requestId: "a", inputLength: x as number }, 0),
          p.route(p.init(2), { requestId: "a", inputLength: 5 }, x as number),
          p.route(p.init(x as number), { requestId: "a", inputLength: 5 }, 0)
        ].map((r) => (r._tag === "Routed" ? "Routed" : r.field))
        expect([entry.name, fields]).toEqual([entry.name, ["inputLength", "now", "dpSize"]])
        // a pin of such a value (or a bigint, a string, a function proxy that throws on access)
        const trap = new Proxy(() => 0, {
          get() {
            throw new Error("trap")
          }
        })
        for (const pin of [x, 1n, "2", trap]) {
          const r = p.route(p.init(4), { requestId: "a", inputLength: 5, routedDpRank: pin as number }, 0)
          expect([entry.name, r._tag === "Routed" ? "Routed" : r.field]).toEqual([entry.name, "routedDpRank"])
        }
      }
    }
  })
})

describe("init with no rank (dpSize 0): every registered policy answers NoRanks naming dpSize", () => {
  // before (fresh-user trial): 25 answered AllRanksUnavailable naming status, vLLM's four NoRanks
  // naming numEngines, follow-bootstrap-room MissingBootstrapRoom, 20 NoRanks naming dpSize
  it("all entries, the same error", () => {
    const answers = new Set(
      policyEntries().map((entry) => {
        const p = entry.make({})
        const r = p.route(p.observe(p.init(0), [], 1), { requestId: "a", inputLength: 10 }, 1)
        return r._tag === "Routed" ? `${entry.name}: routed` : `${r.reason} ${r.field}`
      })
    )
    expect([...answers]).toEqual(["NoRanks dpSize"])
  })
})

describe("the exported policies used directly, with a bad init size: a typed error, never a throw or rank 0", () => {
  // before: SGLang's total-tokens / total-requests / round-robin routed to rank 0 of 2.5 ranks and
  // the peers threw RangeError from inside init; the registry's entries refuse naming dpSize (above)
  const direct: ReadonlyArray<readonly [string, Policy<unknown>]> = [
    ["totalTokens", totalTokens as Policy<unknown>],
    ["totalRequests", totalRequests as Policy<unknown>],
    ["roundRobin", roundRobin as Policy<unknown>],
    ["smg cache-aware", Smg.makeSmgPolicy("cache-aware") as Policy<unknown>],
    ["production-stack roundrobin", ProductionStack.makePsPolicy("roundrobin") as Policy<unknown>]
  ]
  for (const [name, p] of direct)
    it(name, () => {
      for (const bad of [-1, 2.5, Number.NaN]) {
        const r = p.route(p.init(bad), { requestId: "a", inputLength: 10 }, 1)
        expect(r._tag).toBe("PolicyError")
      }
    })
})

describe("untyped callers: what a JavaScript caller may pass never throws from inside a registered policy", () => {
  // before: observe(s, null), observe(s, [null]), route(s, null), finish(s, null) and
  // finish(s, [5, null, {}]) threw TypeError in every one of the 50 entries (fresh-user trial)
  for (const entry of policyEntries())
    it(entry.name, () => {
      const p = entry.make({})
      const any = (u: unknown) => u as never
      let s = p.init(2)
      s = p.observe(s, any(null), 1)
      s = p.observe(s, any([null, { dpRank: 0, numRunningReqs: 1, numWaitingReqs: 0 }, 5]), 1)
      s = p.setStatus(s, any(null))
      s = p.finish(s, any(null), 1)
      s = p.finish(s, any([5, null, {}]), 1)
      expect(p.route(s, any(null), 1)).toMatchObject({ reason: "InvalidInput", field: "request" })
      expect(p.route(s, any("a"), 1)).toMatchObject({ reason: "InvalidInput", field: "request" })
      const r = p.route(s, { requestId: "a", inputLength: 10, bootstrapRoom: "1" }, 1)
      expect(r._tag === "Routed" || r._tag === "PolicyError").toBe(true)
    })
})

describe("no healthy rank: the error names the field that caused it", () => {
  // before: the own policies and the smg / production-stack adapters left `field` unset
  for (const entry of policyEntries())
    it(entry.name, () => {
      const p = entry.make({})
      const rows = [0, 1].map((r) => ({ dpRank: r, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }))
      const s = p.setStatus(p.observe(p.init(2), rows, 1), [false, false])
      const r = p.route(s, { requestId: "a", inputLength: 10, bootstrapRoom: "1", prefixHashes: ["h"] }, 1)
      if (r._tag === "PolicyError") expect([r.reason, r.field]).toEqual([r.reason, expect.any(String)])
    })
})
