// One rule for a request's prompt length (issue 15): every registered policy, reference, own and
// peer alike, refuses an `inputLength` that is not a token count with `checkInputLength`'s error,
// pinned or not, and a wrapper refuses it even around a policy that never reads the length.
import { describe, expect, it } from "vitest"
import { checkInputLength, type Policy, policyEntries, withKvAdmission, withStaleness } from "../src/index.js"
import { errorOf, expectWholeRegistry, registryRequest, registryRows } from "./support/registryRequest.js"

// fractional, one past the safe integers, the largest double below 2^64, negative, NaN, infinite
const notCounts = [1.5, 2 ** 53, 2 ** 64 - 2 ** 11, -1, Number.NaN, Number.POSITIVE_INFINITY]

const rows = registryRows
const request = registryRequest

describe("inputLength: one rule over the registry", () => {
  it("every registered policy refuses a non-count inputLength with checkInputLength's error, and routes 0 and 2^53 - 1", () => {
    const seen: Array<string> = []
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s = p.observe(p.init(4), rows, 1)
      for (const n of notCounts)
        for (const pin of [undefined, 0]) {
          const out = p.route(s, request(n, pin), 1.001)
          expect(errorOf(out), `${entry.name} inputLength ${n} pinned ${pin}`).toEqual(
            errorOf(checkInputLength(n))
          )
        }
      for (const n of [0, 2 ** 53 - 1])
        expect(p.route(s, request(n), 1.001)._tag, `${entry.name} inputLength ${n}`).toBe("Routed")
      seen.push(entry.name)
    }
    // the loop covered the whole registry, reference, own and peer entries alike
    expectWholeRegistry(seen, ["round-robin", "vllm-kv-pressure", "ledger-balanced", "smg/dp-min-token"])
  })

  it("withKvAdmission and withStaleness refuse it around a policy that never reads the length", () => {
    const anything: Policy<number> = {
      name: "anything",
      init: (n) => n,
      observe: (s) => s,
      route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} }),
      finish: (s) => s,
      setStatus: (s) => s
    }
    for (const p of [withKvAdmission(anything), withStaleness(anything)] as ReadonlyArray<Policy<unknown>>)
      for (const n of [1.5, 2 ** 53])
        expect(errorOf(p.route(p.observe(p.init(2), rows.slice(0, 2), 1), request(n), 1.001))).toEqual(
          errorOf(checkInputLength(n))
        )
  })
})
