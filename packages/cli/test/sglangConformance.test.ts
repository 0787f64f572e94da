import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { sglangDpLb } from "../src/conformance/sglangDpLb.js"
import { runCaptured } from "./runCli.js"

const dpLbFile = fileURLToPath(
  new URL("../../../fixtures/reference/sglang/dp_lb_cases.json", import.meta.url)
)
const doc = () => JSON.parse(readFileSync(dpLbFile, "utf8"))

/** `loadledger conformance FILES` in-process: the exit code and what it printed. */
const conformance = (...files: Array<string>) => runCaptured("conformance", ...files)

afterEach(() => {
  process.exitCode = undefined
})

describe("loadledger conformance: every file in fixtures/reference/sglang/", () => {
  it("passes all of them: 247 dp_lb cases + 18 /v1/loads vectors (README counts)", async () => {
    const dir = fileURLToPath(new URL("../../../fixtures/reference/sglang/", import.meta.url))
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort()
    expect(files).toEqual(["dp_lb_cases.json", "v1_loads_snapshots.json"])
    const r = await conformance(...files.map((f) => join(dir, f)))
    expect(r.out).toBe("265 passed, 0 failed\n")
    expect(r.code).toBe(0)
  })
})

describe("loadledger conformance: SGLang dp_lb_cases.json", () => {
  it("replays all 247 cases with no difference", async () => {
    expect(doc().cases.length).toBe(247)
    const r = await conformance(dpLbFile)
    expect(r.out).toBe("247 passed, 0 failed\n")
    expect(r.code).toBe(0)
  })

  it("names the first differing op and field of a failing case, and exits 1", async () => {
    const d = doc()
    const c = d.cases.find((x: { id: string }) => x.id === "routed-health-001")
    // op 2 is `request` at now = 1.034 routed to rank 1; claim rank 0 instead
    expect(c.ops[2].expect.rank).toBe(1)
    c.ops[2].expect.rank = 0
    const dir = mkdtempSync(join(tmpdir(), "loadledger-"))
    const file = join(dir, "mutated.json")
    writeFileSync(file, JSON.stringify(d))
    const r = await conformance(file)
    expect(r.code).toBe(1)
    expect(r.out).toBe(
      "FAIL sglang-dp-lb-golden routed-health-001: op 2 (request): rank expected 0, got 1\n246 passed, 1 failed\n"
    )
  })

  it("reports a state difference with the state field", () => {
    const d = doc()
    const c = d.cases[0]
    expect(c.id).toBe("upstream-002")
    c.ops[0].expect.state.total_tokens = [150, 81]
    const res = sglangDpLb.run({ ...d, cases: [c] })
    expect(res).toEqual([
      {
        id: "upstream-002",
        ok: false,
        firstDiff: "op 0 (update): state.total_tokens expected [150,81], got [150,80]"
      }
    ])
  })

  it("reports an unexpected error type", () => {
    const d = doc()
    const c = d.cases.find((x: { id: string }) => x.id === "routed-health-001")
    c.ops[4].expect.error.type = "RuntimeError"
    expect(sglangDpLb.run({ ...d, cases: [c] })[0]?.firstDiff).toBe(
      'op 4 (request): error.type expected "RuntimeError", got "ValueError"'
    )
  })

  it("rejects a malformed case as a failure, not an exception", () => {
    expect(sglangDpLb.run({ format: "sglang-dp-lb-golden", cases: [{ id: "x", method: "NOPE" }] })).toEqual([
      { id: "x", ok: false, firstDiff: 'malformed case: method "NOPE"' }
    ])
  })
})
