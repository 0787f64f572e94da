// The path a router author walks, for every payload in fixtures/payloads and every registered
// policy: decodeLedger(payload) -> policy.observe(state, rows, now) -> policy.route(...), with no
// cast and no mapping; each gives a Routed inside the rank range or a typed PolicyError.
import { readdirSync, readFileSync } from "node:fs"
import { policyEntries } from "@loadledger/policies"
import { decodeLedger } from "@loadledger/schema"
import { Result } from "effect"
import { describe, expect, it } from "vitest"

const dir = new URL("../../../fixtures/payloads/", import.meta.url)
const payloads = readdirSync(dir).filter((f) => f !== "README.md")

// Not payloads (fixtures/payloads/README.md): a Python unit test's values and a truncated schema
// excerpt that is not valid JSON. They must fail with a typed error, never decode to rows.
const notPayloads: ReadonlySet<string> = new Set([
  "sglang_load_snapshot_test_values__sglang_test_v1_loads_aggregate.py.txt",
  "sglang_v1_loads_pr16976_schema_excerpt.txt"
])

describe.each(payloads)("decode -> observe -> route: %s", (file) => {
  const decoded = decodeLedger(readFileSync(new URL(file, dir), "utf8"))
  if (notPayloads.has(file)) {
    it("is not a payload: a typed UnknownFormat ('not a load payload')", () =>
      expect(Result.isFailure(decoded) && decoded.failure._tag).toBe("UnknownFormat"))
    return
  }
  it("decodes to at least one row", () => {
    expect(Result.isSuccess(decoded) && decoded.success.length).toBeGreaterThan(0)
  })
  if (Result.isFailure(decoded) || decoded.success.length === 0) return
  const rows = decoded.success
  const dpSize = Math.max(...rows.map((r) => r.dpRank)) + 1
  it.each(policyEntries().map((e) => e.name))("%s routes or gives a typed error", (name) => {
    const policy = policyEntries()
      .find((e) => e.name === name)!
      .make({})
    const now = 1_700_000_000
    const state = policy.observe(policy.init(dpSize), rows, now)
    const out = policy.route(state, { requestId: "r1", inputLength: 128, bootstrapRoom: "7" }, now)
    if (out._tag === "Routed") {
      expect(Number.isInteger(out.rank) && out.rank >= 0 && out.rank < dpSize).toBe(true)
    } else {
      expect(out).toMatchObject({
        _tag: "PolicyError",
        reason: expect.any(String),
        message: expect.any(String)
      })
    }
  })
})
