// One rule for a call's time (issue: `now = NaN` routed silently): every registered policy, reference,
// own and peer alike, refuses a `now` that is not a finite number with `checkNow`'s error, pinned or
// not, right after the inputLength check; and `observe` with such a `now` returns its state unchanged.
import { describe, expect, it } from "vitest"
import {
  checkInputLength,
  checkNow,
  type Policy,
  policyEntries,
  type RankLoad,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { errorOf, expectWholeRegistry, registryRequest, registryRows } from "./support/registryRequest.js"

const notTimes = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]
// negative finite times are legal (a clock may start anywhere), so are the extremes of a double
const times = [-1e9, -0.5, 0, 1.001, 1e12, -Number.MAX_VALUE, Number.MAX_VALUE]

// the same loads without timestamps (stamped `now` by policies that keep ages) and one unknown row
const unstamped: ReadonlyArray<RankLoad> = [
  ...registryRows.slice(0, 3).map(({ timestamp: _, ...row }) => row),
  { dpRank: 3, unknown: { reason: "unreachable", message: "poll timed out" } }
]

const rows = registryRows
// everything but `now` is what the pickiest policy wants
const request = (routedDpRank?: number, inputLength = 10) => registryRequest(inputLength, routedDpRank)

describe("now: one rule over the registry", () => {
  it("every registered policy refuses a non-finite now with checkNow's error (after inputLength's), and routes at finite times, negative ones included", () => {
    const seen: Array<string> = []
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s = p.observe(p.init(4), rows, 1)
      for (const now of notTimes) {
        for (const pin of [undefined, 0]) {
          const out = p.route(s, request(pin), now)
          expect(errorOf(out), `${entry.name} now ${now} pinned ${pin}`).toEqual(errorOf(checkNow(now)))
        }
        // a request bad in both gets the inputLength error, from every policy alike
        expect(errorOf(p.route(s, request(undefined, 1.5), now)), `${entry.name} both bad`).toEqual(
          errorOf(checkInputLength(1.5))
        )
      }
      for (const now of times) {
        const fresh = p.observe(p.init(4), unstamped, now)
        expect(p.route(fresh, request(), now)._tag, `${entry.name} now ${now}`).toBe("Routed")
        expect(p.route(s, request(1), now)._tag, `${entry.name} pinned now ${now}`).toBe("Routed")
      }
      seen.push(entry.name)
    }
    expectWholeRegistry(seen, [
      "round-robin",
      "vllm-kv-pressure",
      "ledger-balanced",
      "smg/dp-min-token",
      "production-stack/roundrobin",
      "llm-d/profile"
    ])
  })

  it("every registered policy's observe with a non-finite now returns its state unchanged", () => {
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s0 = p.init(4)
      const s1 = p.observe(s0, rows, 1)
      const routed = p.route(s1, request(), 1.001)
      if (routed._tag !== "Routed") throw new Error(`${entry.name} did not route`)
      for (const s of [s0, s1, routed.state])
        for (const now of notTimes)
          for (const loads of [rows, unstamped, []])
            expect(p.observe(s, loads, now), `${entry.name} observe at ${now}`).toBe(s)
    }
  })

  it("withKvAdmission and withStaleness refuse it around a policy that never reads the time, and ignore such an observe", () => {
    let observed = 0
    const anything: Policy<number> = {
      name: "anything",
      init: (n) => n,
      observe: (s) => {
        observed++
        return s
      },
      route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} }),
      finish: (s) => s,
      setStatus: (s) => s
    }
    for (const p of [withKvAdmission(anything), withStaleness(anything)] as ReadonlyArray<Policy<unknown>>) {
      const s = p.observe(p.init(2), rows.slice(0, 2), 1)
      for (const now of notTimes) {
        expect(errorOf(p.route(s, request(), now))).toEqual(errorOf(checkNow(now)))
        expect(errorOf(p.route(s, request(0), now))).toEqual(errorOf(checkNow(now)))
        const before = observed
        expect(p.observe(s, rows.slice(0, 2), now)).toBe(s)
        expect(observed).toBe(before)
      }
      expect(p.route(s, request(), -2)._tag).toBe("Routed")
    }
  })
})
