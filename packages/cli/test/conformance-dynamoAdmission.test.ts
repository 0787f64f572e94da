import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runVectors } from "../src/conformance/index.js"
import { runCaptured } from "./runCli.js"

const file = new URL("../../../fixtures/reference/peers/dynamo-admission.json", import.meta.url)
const load = () => JSON.parse(readFileSync(file, "utf8"))

describe("dynamo rank-balanced admission vectors (rank_balanced.rs @ 35720b27)", () => {
  it("are detected and all 24 cases pass, 16 of them from the 14 upstream tests", () => {
    const doc = load()
    const out = runVectors(doc)
    expect(out?.format).toBe("loadledger-peer-policy-golden/dynamo-admission")
    expect(out?.results.length).toBe(24)
    expect(out?.results.filter((r) => !r.ok)).toEqual([])
    expect(doc.cases.filter((c: { category: string }) => c.category === "upstream_unit")).toHaveLength(16)
  })

  it("a wrong rank, decision or error is reported with its step", () => {
    const doc = load()
    doc.cases[0].steps[4].expect.actions[0].id = 0
    doc.cases[2].steps[0].expect.decision = "Bypass"
    doc.cases[13].steps[3].expect.error_contains = "duplicate"
    const bad = runVectors(doc)!.results.filter((r) => !r.ok)
    expect(bad.map((r) => r.id)).toEqual([
      "rb-up-one-cohort",
      "rb-up-no-cross-worker",
      "rb-up-duplicate-and-contradictory-close"
    ])
    expect(bad[0]!.firstDiff).toMatch(/^step 4 \(event\): actions expected \[\{"id":0,/)
    expect(bad[1]!.firstDiff).toBe('step 0 (admit): decision expected "Bypass", got "Defer"')
    expect(bad[2]!.firstDiff).toMatch(
      /^step 3 \(close\): unexpected error admission population "bad" was already closed at 1, not 2/
    )
  })

  it("`loadledger conformance dynamo-admission.json` prints 24 passed, 0 failed", async () => {
    const r = await runCaptured("conformance", file.pathname)
    expect(r.code).toBe(0)
    expect(r.out).toBe("24 passed, 0 failed\n")
  })
})
