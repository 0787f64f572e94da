// Issue 36 item 4: every check before any work, run as a user runs the command (a subprocess of the
// built `loadledger`): the rank bound, model x GPU x TP fit (`--tp` on capacity too), output paths,
// nothing written when a run cannot start, and one rule for a trace out of arrival order.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { built, run } from "./cliSubprocess.js"

const tmp = mkdtempSync(join(tmpdir(), "ll-upfront-"))
const mooncake = "examples/traces/mooncake/conversation_trace.jsonl"

describe.skipIf(!built)("checks before any work", () => {
  it("--dp 100000 is refused up front and writes no report (simulate, goodput, compare)", () => {
    for (const cmd of ["simulate", "goodput", "compare"]) {
      const report = join(tmp, `${cmd}-dp.html`)
      const r = run([cmd, "--trace", mooncake, "--dp", "100000", "--report", report])
      expect(r.status).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(
        'loadledger: --dp must be an integer from 1 to 4096 (the simulator\'s rank bound), got "100000"\n'
      )
      expect(existsSync(report)).toBe(false)
    }
  })

  it("a --report in a folder that does not exist is refused before the trace is replayed", () => {
    for (const cmd of ["simulate", "goodput", "compare"]) {
      const r = run([cmd, "--trace", mooncake, "--dp", "2", "--report", "/no/such/dir/r.html"])
      expect(r.status).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe("loadledger: --report: directory /no/such/dir does not exist\n")
    }
  })

  it("capacity takes --tp: llama2-70b on h200 is refused at TP 1 naming --tp 2, and runs at --tp 2", () => {
    const args = ["capacity", "--trace", mooncake, "--model", "llama2-70b", "--limit", "100", "--dp", "2"]
    const no = run([...args, "--jobs", "1"])
    expect(no.status).toBe(1)
    expect(no.stdout).toBe("")
    expect(no.stderr).toContain("llama2-70b does not fit on one h200 at tensor parallel 1")
    expect(no.stderr).toContain("at tensor parallel 2 each GPU would hold")
    const bad = run([...args, "--tp", "3"])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toBe(
      "loadledger: --tp 3: the step-time model prices tensor parallel 1, 2, 4 or 8 (one node's NVLink domain)\n"
    )
    const ok = run([...args, "--tp", "2", "--jobs", "1", "--json", "--quiet"])
    expect(ok.status).toBe(0)
    const out = JSON.parse(ok.stdout) as { tp: number; model: string; rate: number }
    expect(out.tp).toBe(2)
    expect(out.model).toBe("llama2-70b")
    expect(out.rate).toBeGreaterThan(0)
  })
})

describe.skipIf(!built)(
  "a trace out of arrival order: sorted, with a notice naming the row, on every path",
  () => {
    const head = "arrival_seconds,input_length,output_length\n"
    const unsorted = join(tmp, "unsorted.csv")
    const sorted = join(tmp, "sorted.csv")
    writeFileSync(unsorted, `${head}0,100,10\n2,100,10\n1,100,10\n3,100,10\n`)
    writeFileSync(sorted, `${head}0,100,10\n1,100,10\n2,100,10\n3,100,10\n`)
    const notice = `loadledger: ${unsorted} is not in arrival order (data row 3 is earlier than the row before it): replaying it sorted by arrival\n`
    const results = (stdout: string) =>
      (JSON.parse(stdout) as { results: Array<{ ttftSeconds: unknown; requests: unknown }> }).results.map(
        (r) => [r.ttftSeconds, r.requests]
      )

    it("one policy (the streamed path, which refuses the row and falls back to the whole read)", () => {
      const args = ["simulate", "--policies", "round-robin", "--dp", "2", "--json"]
      const u = run([...args, "--trace", unsorted])
      const s = run([...args, "--trace", sorted])
      expect(u.status).toBe(0)
      expect(u.stderr).toBe(notice)
      expect(s.stderr).toBe("")
      expect(results(u.stdout)).toEqual(results(s.stdout))
    })

    it("two policies (the whole read), and goodput and sweep's up-front read: the same notice", () => {
      const args = ["simulate", "--policies", "round-robin,total-tokens", "--dp", "2", "--json"]
      const u = run([...args, "--trace", unsorted])
      expect(u.status).toBe(0)
      expect(u.stderr).toBe(notice)
      expect(results(u.stdout)).toEqual(results(run([...args, "--trace", sorted]).stdout))
      // goodput reads the trace whole up front: the notice comes before its own check (too few rows)
      const g = run(["goodput", "--trace", unsorted, "--dp", "2", "--policy", "round-robin"])
      expect(g.stderr.startsWith(notice)).toBe(true)
    })
  }
)
