// One rule for a request's other fields (issue: `prefixHashes: "abc"` routed silently, a string being
// iterable with a `.length`): every registered policy, reference, own and peer alike, refuses a
// `requestId`, `bootstrapRoom`, `sessionId`, `prefixHashes` or `tokenIds` not of its type with
// `checkRequestFields`' error, pinned or not, right after the inputLength and now checks; valid
// requests, edge values included, still route.
import { describe, expect, it } from "vitest"
import {
  checkInputLength,
  checkNow,
  checkRequestFields,
  type Policy,
  policyEntries,
  type RouteRequest,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { errorOf, expectWholeRegistry, registryRequest, registryRows } from "./support/registryRequest.js"

const rows = registryRows
// the registry request with some fields replaced by what an untyped caller (JSON, JavaScript) sends
const withFields = (fields: Record<string, unknown>, pin?: number, inputLength = 10): RouteRequest =>
  ({ ...registryRequest(inputLength, pin), ...fields }) as RouteRequest

// each bad request with the field its error must name
const bad: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
  [{ prefixHashes: "abc" }, "prefixHashes"],
  [{ prefixHashes: "" }, "prefixHashes"],
  [{ prefixHashes: null }, "prefixHashes"],
  [{ prefixHashes: { length: 2, 0: "a", 1: "b" } }, "prefixHashes"],
  [{ prefixHashes: new Set(["a", "b"]) }, "prefixHashes"],
  [{ prefixHashes: 7 }, "prefixHashes"],
  [{ prefixHashes: [7] }, "prefixHashes[0]"],
  [{ prefixHashes: ["a", "b", null] }, "prefixHashes[2]"],
  [{ prefixHashes: ["a", ["b"]] }, "prefixHashes[1]"],
  // a hole (sparse array) is no hash either
  [{ prefixHashes: Object.assign(new Array<string>(2), { 1: "b" }) }, "prefixHashes[0]"],
  [{ tokenIds: "abc" }, "tokenIds"],
  [{ tokenIds: null }, "tokenIds"],
  [{ tokenIds: new Uint32Array([1, 2]) }, "tokenIds"],
  [{ tokenIds: [1, -1] }, "tokenIds[1]"],
  [{ tokenIds: [2.5] }, "tokenIds[0]"],
  [{ tokenIds: [2 ** 32] }, "tokenIds[0]"],
  [{ tokenIds: [Number.NaN] }, "tokenIds[0]"],
  [{ tokenIds: ["1"] }, "tokenIds[0]"],
  [{ tokenIds: Object.assign(new Array<number>(2), { 1: 5 }) }, "tokenIds[0]"],
  [{ sessionId: 7 }, "sessionId"],
  [{ sessionId: null }, "sessionId"],
  [{ sessionId: ["s"] }, "sessionId"],
  [{ bootstrapRoom: 7 }, "bootstrapRoom"],
  [{ bootstrapRoom: null }, "bootstrapRoom"],
  [{ bootstrapRoom: { room: "7" } }, "bootstrapRoom"],
  [{ requestId: undefined }, "requestId"],
  [{ requestId: 7 }, "requestId"],
  [{ requestId: null }, "requestId"],
  // several bad: the first in requestId, bootstrapRoom, sessionId, prefixHashes order
  [{ requestId: 1, sessionId: 2, prefixHashes: "abc" }, "requestId"],
  [{ sessionId: 2, prefixHashes: "abc" }, "sessionId"],
  [{ prefixHashes: [7], tokenIds: [-1] }, "prefixHashes[0]"]
]

// valid, but smg/prefix-hash@v1.9.0 selects no worker without token ids or hashes (upstream's
// `no_tokens`); the head's smg/prefix-hash takes the least-loaded worker (`no_routing_key`, #2148)
const noHashes: ReadonlyArray<Record<string, unknown>> = [
  { prefixHashes: [] },
  { prefixHashes: undefined },
  { prefixHashes: undefined, tokenIds: [] }
]

// valid edge values: every one of these must still route, from every policy
const good: ReadonlyArray<Record<string, unknown>> = [
  {},
  { prefixHashes: ["", "a", "a"] },
  { prefixHashes: Array.from({ length: 1000 }, (_, i) => `h${i}`) },
  { sessionId: "" },
  { sessionId: undefined },
  { requestId: "" },
  { bootstrapRoom: 7n },
  { bootstrapRoom: "-1" },
  { tokenIds: [0, 4294967295, 151643] },
  // token ids alone are what smg/prefix-hash needs: every policy routes a request without hashes
  { prefixHashes: undefined, tokenIds: Array.from({ length: 2000 }, (_, i) => i) }
]

describe("checkRequestFields", () => {
  it("names the field and says what it got", () => {
    for (const [fields, field] of bad) {
      const e = checkRequestFields(withFields(fields))
      expect([e?._tag, e?.reason, e?.field], JSON.stringify(Object.keys(fields))).toEqual([
        "PolicyError",
        "InvalidInput",
        field
      ])
    }
    expect(checkRequestFields(withFields({ prefixHashes: "abc" }))?.message).toBe(
      "prefixHashes must be absent or an array of strings, got string"
    )
    expect(checkRequestFields(withFields({ prefixHashes: ["a", null] }))?.message).toBe(
      "prefixHashes[1] must be a string, got null"
    )
    expect(checkRequestFields(withFields({ sessionId: [] }))?.message).toBe(
      "sessionId must be absent or a string, got array"
    )
    expect(checkRequestFields(withFields({ requestId: undefined }))?.message).toBe(
      "requestId must be a string, got undefined"
    )
    expect(checkRequestFields(withFields({ tokenIds: [3, 1.5] }))?.message).toBe(
      "tokenIds[1] must be a token id (an integer 0..4294967295), got 1.5"
    )
    expect(checkRequestFields(withFields({ tokenIds: 3 }))?.message).toBe(
      "tokenIds must be absent or an array of token ids, got number"
    )
    for (const fields of [...good, ...noHashes])
      expect(checkRequestFields(withFields(fields))).toBeUndefined()
  })
})

describe("request fields: one rule over the registry", () => {
  it("every registered policy refuses a field not of its type with checkRequestFields' error (after inputLength's and now's), pinned or not, and routes valid edge values", () => {
    const seen: Array<string> = []
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s = p.observe(p.init(4), rows, 1)
      const first = p.route(s, withFields({}), 1.001)
      if (first._tag !== "Routed") throw new Error(`${entry.name} did not route`)
      const warm = first.state
      for (const [fields, field] of bad) {
        for (const pin of [undefined, 0]) {
          const req = withFields(fields, pin)
          const expected = errorOf(checkRequestFields(req))
          expect(expected.field).toBe(field)
          // at the first route (a refresh due) and just after a valid one (SGLang's fast paths)
          expect(errorOf(p.route(s, req, 1.001)), `${entry.name} ${field} pinned ${pin}`).toEqual(expected)
          expect(errorOf(p.route(warm, req, 1.002)), `${entry.name} ${field} pinned ${pin} warm`).toEqual(
            expected
          )
        }
        // a request also bad in inputLength or now gets that error, from every policy alike
        expect(errorOf(p.route(s, withFields(fields, undefined, 1.5), 1.001)), `${entry.name} both`).toEqual(
          errorOf(checkInputLength(1.5))
        )
        expect(errorOf(p.route(s, withFields(fields), Number.NaN)), `${entry.name} now`).toEqual(
          errorOf(checkNow(Number.NaN))
        )
      }
      for (const fields of good)
        for (const pin of [undefined, 1])
          expect(
            p.route(s, withFields(fields, pin), 1.001)._tag,
            `${entry.name} good #${good.indexOf(fields)} pinned ${pin}`
          ).toBe("Routed")
      for (const fields of noHashes) {
        const out = p.route(s, withFields(fields), 1.001)
        if (entry.name === "smg/prefix-hash@v1.9.0")
          expect(errorOf(out).reason, `${entry.name} no hashes`).toBe("AllRanksUnavailable")
        else expect(out._tag, `${entry.name} no hashes`).toBe("Routed")
      }
      seen.push(entry.name)
    }
    expectWholeRegistry(seen, [
      "round-robin",
      "follow-bootstrap-room",
      "smg/prefix-hash",
      "total-tokens",
      "vllm-kv-pressure",
      "ledger-balanced",
      "smg/dp-min-token",
      "production-stack/roundrobin",
      "llm-d/profile"
    ])
  })

  it("a refused request leaves the next valid route as if it had not been made (no charge, no counter step)", () => {
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s = p.observe(p.init(4), rows, 1)
      const refused = p.route(s, withFields({ prefixHashes: "abc" }), 1.001)
      // a policy that consumed a refresh before refusing reports that state (as for inputLength)
      const after = (refused as { state?: unknown }).state ?? s
      const direct = p.route(s, withFields({}), 1.001)
      const next = p.route(after as typeof s, withFields({}), 1.001)
      expect(next._tag === "Routed" && next.rank, entry.name).toBe(direct._tag === "Routed" && direct.rank)
    }
  })

  it("withKvAdmission and withStaleness refuse it around a policy that never reads the fields", () => {
    const anything: Policy<number> = {
      name: "anything",
      init: (n) => n,
      observe: (s) => s,
      route: (s) => ({ _tag: "Routed", rank: 0, state: s, explanation: {} }),
      finish: (s) => s,
      setStatus: (s) => s
    }
    for (const p of [withKvAdmission(anything), withStaleness(anything)] as ReadonlyArray<Policy<unknown>>) {
      const s = p.observe(p.init(2), rows.slice(0, 2), 1)
      for (const [fields, field] of bad)
        expect(errorOf(p.route(s, withFields(fields), 1.001)).field, `${p.name} ${field}`).toBe(field)
      expect(p.route(s, withFields({ prefixHashes: [] }), 1.001)._tag).toBe("Routed")
    }
  })
})
