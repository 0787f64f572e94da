import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { encode } from "@msgpack/msgpack"
import { afterEach, describe, expect, it } from "vitest"
import { sglangV1Loads } from "../src/conformance/sglangV1Loads.js"
import { built, run as runBin } from "./cliSubprocess.js"
import { runCaptured } from "./runCli.js"

const fixture = (p: string) => fileURLToPath(new URL(`../../../fixtures/${p}`, import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), "loadledger-decode-"))
const write = (name: string, data: string | Uint8Array) => {
  const f = join(tmp, name)
  writeFileSync(f, data)
  return f
}

const run = runCaptured

afterEach(() => {
  process.exitCode = undefined
})

describe("loadledger decode", () => {
  it("prints the docs example's ledger (what `pnpm demo` runs): one object per rank, present fields only", async () => {
    const r = await run("decode", fixture("payloads/sglang_v1_loads_docs_example.json"))
    expect(r.code).toBe(0)
    expect(r.out).toBe(
      '[\n  {"dpRank":0,"timestamp":1705314600,"numRunningReqs":5,"numWaitingReqs":2,"numTotalTokens":100000,"numUsedTokens":5000,"tokenUsage":0.05,"genThroughput":120.5,"utilization":0.75,"kvCacheUsage":0.05}\n]\n'
    )
    expect(JSON.parse(r.out)).toHaveLength(1)
  })
  it("decodes Prometheus text per rank, rank 1 without gen_throughput (S11)", async () => {
    const r = await run(
      "decode",
      fixture("payloads/sglang_metrics_dp8_deepseek_r1__aibrix_issue1614_part1.prom")
    )
    expect(r.code).toBe(0)
    const rows = JSON.parse(r.out) as Array<Record<string, number>>
    expect(rows.map((x) => x["dpRank"])).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(rows[1]).toEqual({ dpRank: 1, numWaitingReqs: 0 })
    expect(r.out.split("\n").filter((l) => l.startsWith("  {"))).toHaveLength(8)
  })
  it("--kind forces the format; a msgpack LoadStat file decodes as bytes", async () => {
    const f = write("stat.msgpack", new Uint8Array([...encode(["LoadStat", 3, 2, 256, 4096, 0])]))
    const r = await run("decode", f, "--kind", "load-stat")
    expect(JSON.parse(r.out)).toEqual([
      { dpRank: 0, numRunningReqs: 3, numWaitingReqs: 2, numTokens: 256, maxTotalNumTokens: 4096 }
    ])
    const g = await run(
      "decode",
      fixture("payloads/sglang_get_load_legacy_single_rank.json"),
      "--kind",
      "get-load"
    )
    expect(JSON.parse(g.out)).toEqual([
      { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
    ])
  })
  it("bad input: one line naming the field at fault, exit 1", async () => {
    const f = write("bad.json", '{"loads":[{"dp_rank":0,"queues":{"waiting":1}}]}')
    const r = await run("decode", f)
    expect(r.code).toBe(1)
    expect(r.out).toBe("")
    expect(r.err).toBe(`loadledger decode: ${f}: $.loads[0].queues.grammar: Missing key\n`)
  })
  it("bad input: one line naming the line at fault, exit 1 (truncated excerpt, duplicated series)", async () => {
    const t = await run(
      "decode",
      fixture("payloads/sglang_v1_loads_pr16976_schema_excerpt.txt"),
      "--kind",
      "v1-loads"
    )
    expect(t.code).toBe(1)
    expect(t.err.trim().split("\n")).toHaveLength(1)
    expect(t.err).toContain(": line 1: ")
    const d = await run("decode", fixture("payloads/vllm_metrics_dp4_engine_imbalance__vllm_issue48808.prom"))
    expect(d.code).toBe(0)
    expect(d.err).toBe(
      "notice: MultipleScrapes: 2 scrapes pasted one after the other; the last one (from line 10) was decoded\n"
    )
    expect(JSON.parse(d.out).map((r: { numRunningReqs: number }) => r.numRunningReqs)).toEqual([27, 5, 0, 0])
  })
  it("prints every notice on stderr and in --json (declared without samples, unknown series, defaulted identity)", async () => {
    const declared = write(
      "declared.prom",
      "# HELP vllm:num_requests_waiting w\n# TYPE vllm:num_requests_waiting gauge\n"
    )
    const d = await run("decode", declared)
    expect(d.code).toBe(0)
    expect(d.out).toBe("[]\n")
    expect(d.err).toBe(
      "notice: DeclaredWithoutSamples: vllm:num_requests_waiting is declared without samples: its field is absent on every rank (not 0)\n"
    )
    const j = await run("decode", declared, "--json")
    expect(JSON.parse(j.out)).toEqual({
      rows: [],
      notices: [
        {
          _tag: "DeclaredWithoutSamples",
          series: "vllm:num_requests_waiting",
          message:
            "vllm:num_requests_waiting is declared without samples: its field is absent on every rank (not 0)"
        }
      ]
    })
    const q = await run(
      "decode",
      fixture("payloads/vllm_metrics_qwen25coder32b__production_stack_issue318.prom")
    )
    expect(q.code).toBe(0)
    expect(JSON.parse(q.out)).toEqual([{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, kvCacheUsage: 0 }])
    const lines = q.err.trim().split("\n")
    expect(lines.filter((l) => l.startsWith("notice: UnknownSeries: process_"))).toHaveLength(4)
    expect(lines).toContain(
      "notice: DefaultedIdentity: vllm:num_requests_running (line 15) has no engine label: read as rank 0"
    )
  })
  it("a scrape whose series are all unknown fails naming them (never a silent [])", async () => {
    const f = write("unknown.prom", 'sglang:foo{dp_rank="0"} 1\n')
    const r = await run("decode", f)
    expect(r.code).toBe(1)
    expect(r.out).toBe("")
    expect(r.err).toContain("no SGLang load series in the text; series not modelled: sglang:foo")
  })
  it("an unknown --kind is rejected", async () => {
    const r = await run("decode", fixture("payloads/sglang_v1_loads_docs_example.json"), "--kind", "xml")
    expect(r.code).toBe(1)
  })
})

describe("loadledger conformance: sglang v1_loads_snapshots.json", () => {
  const file = fixture("reference/sglang/v1_loads_snapshots.json")
  it("reproduces all 18 vectors", async () => {
    const r = await run("conformance", file)
    expect(r.out).toBe("18 passed, 0 failed\n")
    expect(r.code).toBe(0)
  })
  it("reports a vector whose expected value is changed, naming the field", () => {
    const doc = JSON.parse(readFileSync(file, "utf8"))
    doc.vectors[0].decoded[1].num_waiting_reqs += 1
    doc.vectors[3].to_dict_error = "something else"
    doc.vectors[16].decode_error = "Object missing required field `paused` - at `$.queues`"
    doc.vectors[10].budget_inputs[0].timestamp_present = false
    const results = sglangV1Loads.run(doc)
    expect(results.filter((x) => !x.ok).map((x) => x.id)).toEqual([
      "v1-all-4ranks",
      "v1-trailing-comma",
      "v2-zero-load",
      "tol-section-missing-required"
    ])
    expect(results[0]!.firstDiff).toMatch(/^decoded\[1\]\.num_waiting_reqs: expected \d+, got \d+$/)
  })
})

describe("loadledger decode: no input byte reaches the terminal raw", () => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
  const esc = "\u001b]52;c;cHduZWQ=\u0007\u001b[2J\u009b31m\u202e"
  it("a bad value holding ESC / OSC 52 / CSI: the stderr message shows them escaped", async () => {
    const f = write(`bad-\u001b[31m.prom`, `sglang:num_running_reqs{dp_rank="0"} 1${esc}\n`)
    const r = await run("decode", "--kind", "sglang-metrics", f)
    expect(r.code).toBe(1)
    expect(RAW.test(r.err)).toBe(false)
    expect(RAW.test(r.out)).toBe(false)
    expect(r.err).toContain("bad-\\x1b[31m.prom")
    expect(r.err).toContain("\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m\\u202e")
  })
  it("label values with C1 controls and bidi marks: notices on stderr and the JSON on stdout are escaped", async () => {
    const f = write(
      "labels.prom",
      `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{dp_rank="0"} 3\nx_unknown{v="${esc}"} 2\n`
    )
    for (const json of [[], ["--json"]]) {
      const r = await run("decode", "--kind", "sglang-metrics", ...json, f)
      expect(r.code).toBe(0)
      expect(RAW.test(r.err)).toBe(false)
      expect(RAW.test(r.out)).toBe(false)
    }
  })
})

describe("loadledger decode of binary input (subprocess, as a user runs it)", () => {
  it.skipIf(!built)("refuses 50 MB of random bytes from their first 64 KB, naming what it saw", () => {
    // a seeded generator (mulberry32), so the bytes and the message are the same on every run
    let s = 36
    const next = () => {
      s = (s + 0x6d2b79f5) | 0
      let t = Math.imul(s ^ (s >>> 15), 1 | s)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) & 0xff
    }
    const bytes = new Uint8Array(50 * 1024 * 1024)
    for (let i = 0; i < bytes.length; i++) bytes[i] = next()
    const f = write("random.bin", bytes)
    const r = runBin(["decode", f])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe("")
    const nul = bytes.indexOf(0)
    expect(nul).toBeLessThan(64 * 1024)
    expect(r.stderr).toBe(
      `loadledger decode: ${f}: not a load report: a NUL byte at offset ${nul} in the first 64 KB, and not a msgpack LoadStat array (first byte 0x${bytes[0]!.toString(16).padStart(2, "0")}); payloads are JSON, Prometheus text or msgpack\n`
    )
    expect(r.stderr).not.toContain("Mac")
  })

  it.skipIf(!built)("names invalid UTF-8 when the prefix has no NUL byte", () => {
    const f = write("latin1.txt", Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a]))
    const r = runBin(["decode", f])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("not a load report: invalid UTF-8 in the first 64 KB")
  })
})
