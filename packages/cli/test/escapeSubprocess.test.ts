/**
 * Issue 32 item 3: a payload holding terminal escape sequences, fed to `loadledger decode` in a
 * real subprocess (the sources under tsx, so no build is needed), writes no raw control byte to
 * stdout or stderr: every quoted input byte is escaped (`escapeControl` / `stringifyJsonSafe`).
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const repo = new URL("../../../", import.meta.url).pathname
const tsx = join(repo, "node_modules/.bin/tsx")
const bin = join(repo, "packages/cli/src/bin.ts")
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
const esc = "\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31m\u202e\u007f"

const decode = (name: string, body: string, ...flags: Array<string>) => {
  const dir = mkdtempSync(join(tmpdir(), "ll-esc-"))
  const f = join(dir, name)
  writeFileSync(f, body)
  return spawnSync(tsx, ["--conditions", "@loadledger/source", bin, "decode", ...flags, f], {
    cwd: repo,
    encoding: "utf8"
  })
}

describe("loadledger decode in a subprocess: no raw control byte out", () => {
  it("a bad exposition value with ESC / OSC 52 / CSI / DEL: the error on stderr is escaped", () => {
    const r = decode(
      `bad-\u001b[31m.prom`,
      `sglang:num_running_reqs{dp_rank="0"} 1${esc}\n`,
      "--kind",
      "sglang-metrics"
    )
    expect(r.status).toBe(1)
    expect(RAW.test(r.stderr)).toBe(false)
    expect(RAW.test(r.stdout)).toBe(false)
    expect(r.stderr).toContain("\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m\\u202e\\x7f")
  }, 60_000)
  it("a scheduler log line with escapes in an unknown item and a bad count: stdout and stderr escaped", () => {
    const ok = decode(
      "ok.log",
      `[2026-05-27 20:14:38 DP1] Decode batch, #running-req: 2, x${esc}: ${esc}, #queue-req: 0, \n`,
      "--json"
    )
    expect(ok.status).toBe(0)
    expect(RAW.test(ok.stdout)).toBe(false)
    expect(RAW.test(ok.stderr)).toBe(false)
    expect(JSON.parse(ok.stdout).rows).toEqual([{ dpRank: 1, numRunningReqs: 2, numWaitingReqs: 0 }])
    const bad = decode("bad.log", `[DP1] Decode batch, #running-req: 2${esc}, \n`)
    expect(bad.status).toBe(1)
    expect(RAW.test(bad.stderr)).toBe(false)
    expect(bad.stderr).toContain("SGLang scheduler log, line 1")
  }, 60_000)
})
