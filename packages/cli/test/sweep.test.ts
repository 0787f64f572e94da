import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { findPolicy } from "@loadledger/policies"
import { scaleTrace, simulate } from "@loadledger/sim"
import { describe, expect, it } from "vitest"
import { main } from "../src/index.js"
import { readTraceFile, simConfigFor } from "../src/internal/simSetup.js"
import { mergeRuns, readCells, runSweep } from "../src/sweep/run.js"
import { expandCells, frontEndLabel, parseShard, parseSpec, SpecError } from "../src/sweep/Spec.js"
import type { SummaryRow } from "../src/sweep/Summary.js"
import { captureOutput } from "./captureOutput.js"
import { mooncake } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-sweep-"))
const specText = `name: t
limit: 60
traces: [{ path: ${mooncake}, rates: [0.1, 0.3] }]
frontEnds: [sglang, { engine: vllm, clients: 2 }]
policies: [round-robin, total-tokens, vllm-kv-pressure]
`
const spec = parseSpec(specText, join(dir, "t.yaml"))
const withoutWall = (d: string) =>
  readCells(d, expandCells(spec)).results.map(({ wallSeconds: _w, ...rest }) => rest)

describe("sweep spec", () => {
  it("expands the grid in a fixed order with stable ids", () => {
    const cells = expandCells(spec)
    expect(cells).toHaveLength(2 * 2 * 3)
    expect(cells[0]?.id).toBe("conversation_trace_r0.1_dp8_sglang1_round-robin")
    expect(cells[11]?.id).toBe("conversation_trace_r0.3_dp8_vllm2_vllm-kv-pressure")
    expect(new Set(cells.map((c) => c.id)).size).toBe(12)
  })

  it("refuses bad fields, naming them", () => {
    const bad = (text: string) => {
      try {
        parseSpec(text, "/x/s.yaml")
      } catch (e) {
        return e instanceof SpecError ? e.path : "not a SpecError"
      }
      return "accepted"
    }
    expect(bad("traces: [a.jsonl]\nrates: [0.1]\npolicies: [total-tokens, total-tokens]")).toBe("policies[1]")
    expect(bad("traces: [a.jsonl]\nrates: [0.1]\npolicies: [nope]")).toBe("policies[0]")
    // a model that leaves no KV pool on the GPU: refused with the spec, not after creating the output
    // folder (second fresh-user trial), saying what would fit
    expect(
      bad("model: llama2-70b\ngpu: h100-80gb\ntraces: [a.jsonl]\nrates: [0.1]\npolicies: [total-tokens]")
    ).toBe("gpu")
    try {
      parseSpec(
        "model: llama2-70b\ngpu: h100-80gb\ntraces: [a.jsonl]\nrates: [0.1]\npolicies: [total-tokens]",
        "/x/s.yaml"
      )
    } catch (e) {
      expect((e as Error).message).toContain("llama2-70b fits at tensor parallel 1 on b200")
    }
    expect(bad("traces: [a.jsonl]\nrates: [-1]\npolicies: [total-tokens]")).toBe("rates[0]")
    expect(bad("traces: [a.jsonl]\npolicies: [total-tokens]")).toBe("traces[0].rates")
    expect(bad("traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\nfrontEnds: [{engine: trt}]")).toBe(
      "frontEnds[0].engine"
    )
    expect(bad("traces: [a.jsonl, b/a.jsonl]\nrates: [1]\npolicies: [total-tokens]")).toBe("traces[1].name")
    expect(bad("traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\nmodle: x")).toBe("modle")
    expect(bad("traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\ngpu: tpu")).toBe("gpu")
    expect(bad("{")).toBe("$")
    const fe = (entry: string) =>
      bad(`traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\nfrontEnds: [${entry}]`)
    expect(fe("{engine: sglang, coordinatorRows: vllm}")).toBe("frontEnds[0].coordinatorRows")
    expect(fe("{engine: vllm, coordinatorRows: counts}")).toBe("frontEnds[0].coordinatorRows")
    expect(fe("{engine: vllm, client: 4}")).toBe("frontEnds[0].client")
    expect(fe("{engine: vllm, clients: 4}, {engine: vllm, clients: 4, coordinatorRows: extended}")).toBe(
      "frontEnds[1]"
    )
    expect(fe("{engine: vllm, clients: 4}, {engine: vllm, clients: 4, coordinatorRows: vllm}")).toBe(
      "accepted"
    )
  })

  it("a vLLM front end's coordinatorRows: its own cell ids and label; extended is the default's ids", () => {
    const s = parseSpec(
      "traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\nfrontEnds: [{engine: vllm, clients: 4, coordinatorRows: extended}, {engine: vllm, clients: 4, coordinatorRows: vllm-counts}]",
      "/x/s.yaml"
    )
    const cells = expandCells(s)
    expect(cells.map((c) => [c.id, c.coordinatorRows, frontEndLabel(c)])).toEqual([
      ["a_r1_dp8_vllm4_total-tokens", undefined, "vllm x4"],
      ["a_r1_dp8_vllm4-vllm-countsrows_total-tokens", "vllm-counts", "vllm x4, vllm-counts rows"]
    ])
    // an extended cell is the very cell a spec without the key gives (so earlier results resume)
    expect(cells[0]).toEqual(
      expandCells(
        parseSpec(
          "traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens]\nfrontEnds: [{engine: vllm, clients: 4}]",
          "/x/s.yaml"
        )
      )[0]
    )
  })

  it("resolves relative trace paths against the spec's folder", () => {
    expect(
      parseSpec("traces: [../t/a.jsonl]\nrates: [1]\npolicies: [total-tokens]", "/s/x/spec.yaml").traces[0]
        ?.path
    ).toBe("/s/t/a.jsonl")
  })

  it("shards partition the grid", () => {
    const n = expandCells(spec).length
    const seen = [1, 2, 3].flatMap((i) =>
      expandCells(spec)
        .map((c, k) => ({ c, k }))
        .filter(({ k }) => k % 3 === parseShard(`${i}/3`).index - 1)
        .map(({ c }) => c.id)
    )
    expect(seen.sort()).toEqual(
      expandCells(spec)
        .map((c) => c.id)
        .sort()
    )
    expect(seen).toHaveLength(n)
    expect(() => parseShard("0/2")).toThrow("--shard")
    expect(() => parseShard("3/2")).toThrow("--shard")
  })
})

describe("sweep runs", () => {
  it("two shards merged equal one run, and a rerun keeps finished cells", async () => {
    const one = join(dir, "one")
    const r1 = await runSweep(spec, { outDir: one, workers: 0 })
    expect(r1).toMatchObject({ skipped: 0, ran: 12 })
    const a = join(dir, "a")
    const b = join(dir, "b")
    await runSweep(spec, { outDir: a, workers: 0, shard: { index: 1, count: 2 } })
    await runSweep(spec, { outDir: b, workers: 0, shard: { index: 2, count: 2 } })
    expect(readdirSync(join(a, "cells"))).toHaveLength(6)
    expect(readCells(a, expandCells(spec)).missing).toHaveLength(6)
    const merged = join(dir, "merged")
    mergeRuns(merged, [a, b])
    expect(withoutWall(merged)).toEqual(withoutWall(one))
    expect(withoutWall(one)[0]?.result.requests).toEqual({
      total: 60,
      finished: 60,
      unfinished: 0,
      rejected: 0,
      stalled: 0
    })

    const before = statSync(join(one, "cells", `${expandCells(spec)[0]!.id}.json`)).mtimeMs
    const r2 = await runSweep(spec, { outDir: one, workers: 0 })
    expect(r2).toMatchObject({ skipped: 12, ran: 0 })
    expect(statSync(join(one, "cells", `${expandCells(spec)[0]!.id}.json`)).mtimeMs).toBe(before)

    const changed = parseSpec(specText.replace("limit: 60", "limit: 50"), join(dir, "t.yaml"))
    const r3 = await runSweep(changed, { outDir: one, workers: 0, shard: { index: 1, count: 6 } })
    expect(r3).toMatchObject({ skipped: 0, ran: 2 })
  }, 60_000)

  it("a spec without `limit` resumes too (its cells hold no undefined field once written)", async () => {
    // the fault: cells compared with `limit: undefined` never matched their JSON files, so a rerun of
    // `pnpm compare` (no limit) ran every cell again and the summary said every cell was missing
    const tiny = join(dir, "tiny.jsonl")
    writeFileSync(
      tiny,
      Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({ timestamp: i * 100, input_length: 300, output_length: 5 })
      ).join("\n")
    )
    const noLimit = parseSpec(
      `traces: [{ path: ${tiny}, rates: [1] }]\ndp: [2]\npolicies: [round-robin, total-tokens]\n`,
      join(dir, "n.yaml")
    )
    expect(expandCells(noLimit)[0]).not.toHaveProperty("limit", expect.anything())
    const out = join(dir, "nolimit")
    expect(await runSweep(noLimit, { outDir: out, workers: 0 })).toMatchObject({ skipped: 0, ran: 2 })
    expect(readCells(out, expandCells(noLimit)).missing).toHaveLength(0)
    expect(await runSweep(noLimit, { outDir: out, workers: 0 })).toMatchObject({ skipped: 2, ran: 0 })
  })

  it("runs cells on worker threads with the same results", async () => {
    const small = parseSpec(specText.replace("rates: [0.1, 0.3]", "rates: [0.1]"), join(dir, "t.yaml"))
    const w = join(dir, "threads")
    await runSweep(small, { outDir: w, workers: 2 })
    const inline = join(dir, "inline")
    await runSweep(small, { outDir: inline, workers: 0 })
    const strip = (d: string) =>
      readCells(d, expandCells(small)).results.map(({ wallSeconds: _w, ...r }) => r)
    expect(strip(w)).toHaveLength(6)
    expect(strip(w)).toEqual(strip(inline))
  }, 60_000)

  it("merge refuses folders of different specs", async () => {
    const other = join(dir, "other")
    writeFileSync(join(dir, "o.yaml"), specText.replace("name: t", "name: o"))
    mergeRuns(other, [join(dir, "one")])
    const o = join(dir, "o")
    await runSweep(parseSpec(specText.replace("name: t", "name: o"), join(dir, "o.yaml")), {
      outDir: o,
      workers: 0,
      shard: { index: 1, count: 12 }
    })
    expect(() => mergeRuns(join(dir, "x"), [join(dir, "one"), o])).toThrow("differs")
    expect(() => mergeRuns(join(dir, "y"), [join(dir, "nothing")])).toThrow("no spec.json")
  })
})

describe("loadledger sweep", () => {
  const io = captureOutput()

  it("writes the summary, prints the table and progress lines off a terminal with --progress", async () => {
    const file = join(dir, "cli.yaml")
    writeFileSync(file, specText.replace("rates: [0.1, 0.3]", "rates: [0.1]"))
    const o = join(dir, "cli-out")
    const code = await main(["node", "loadledger", "sweep", file, "--out", o, "--workers", "0", "--progress"])
    expect(code).toBe(0)
    expect(io.out).toContain("**conversation_trace at 0.1x, DP 8, vllm x2**")
    expect(io.out).toMatch(/\| total-tokens \| .* \| ok 60\/60 \|/)
    expect(io.err).toMatch(/^done: 6\/6 cells in \d/m)
    expect(io.out).toMatch(
      /for a verdict with confidence, give the spec `goodput: .*` .* or run loadledger goodput\n$/
    )
    const summary = JSON.parse(readFileSync(join(o, "summary.json"), "utf8"))
    expect(summary.rows).toHaveLength(6)
    expect(summary.missing).toEqual([])
    expect(existsSync(join(o, "summary.md"))).toBe(true)
    const html = readFileSync(join(o, "report.html"), "utf8")
    expect(html).toContain("TTFT p99 (s): conversation_trace, DP 8, vllm x2")
    expect(html).toContain("total-tokens @ 0.1x")
  }, 60_000)

  it("--jobs 1 (this thread) and --jobs 2 (two worker threads) print the same JSON; --jobs with --workers is refused", async () => {
    const file = join(dir, "jobs.yaml")
    writeFileSync(
      file,
      specText.replace("rates: [0.1, 0.3]", "rates: [0.1]").replace("limit: 60", "limit: 30")
    )
    const json = async (jobs: string) => {
      io.out = ""
      const o = join(dir, `jobs-${jobs}`)
      expect(
        await main(["node", "loadledger", "sweep", file, "--out", o, "--jobs", jobs, "--quiet", "--json"])
      ).toBe(0)
      return JSON.parse(io.out) as { rows: ReadonlyArray<SummaryRow>; missing: ReadonlyArray<string> }
    }
    // every field but the wall time a cell took
    const results = (r: Awaited<ReturnType<typeof json>>) => ({
      missing: r.missing,
      rows: r.rows.map(({ wallSeconds: _w, ...row }) => row)
    })
    const one = results(await json("1"))
    const two = results(await json("2"))
    expect(one.rows).toHaveLength(6)
    expect(two).toEqual(one)
    io.out = ""
    io.err = ""
    expect(await main(["node", "loadledger", "sweep", file, "--jobs", "2", "--workers", "2"])).toBe(1)
    expect(io.err).toBe(
      "loadledger: --jobs and --workers both set how many cells run at a time: give one (--jobs)\n"
    )
  }, 60_000)

  it("a policy that rejected every request is not `ok`: the table says what simulate says", async () => {
    // every request pinned to rank 9 of DP 8: total-tokens honours the pin and refuses each
    // (InvalidRoutedRank), smg/round-robin ignores pins as upstream does. (The example was
    // smg/prefix-hash on the Azure trace, "ok 0/120" with keptUp true, until the simulator gave every
    // request token ids.)
    const pinned = join(dir, "pinned.csv")
    const lines = Array.from({ length: 120 }, (_, i) => `${i * 0.5},${300 + i},20,9`)
    writeFileSync(pinned, `arrival_seconds,input_length,output_length,dp_rank\n${lines.join("\n")}\n`)
    const file = join(dir, "rejected.yaml")
    writeFileSync(
      file,
      `name: r\nlimit: 120\ntraces: [{ path: ${pinned}, rates: [1] }]\npolicies: [total-tokens, smg/round-robin]\n`
    )
    const o = join(dir, "rejected-out")
    expect(await main(["node", "loadledger", "sweep", file, "--out", o, "--workers", "0", "--quiet"])).toBe(0)
    const status = (policy: string) =>
      io.out
        .split("\n")
        .find((l) => l.startsWith(`| ${policy} |`))
        ?.split("|")
        .at(-2)
        ?.trim()
    expect([status("total-tokens"), status("smg/round-robin")]).toEqual([
      "incomplete 0/120, 120 rejected",
      "ok 120/120"
    ])
    const rows = JSON.parse(readFileSync(join(o, "summary.json"), "utf8")).rows
    expect(
      rows.map((r: SummaryRow) => [r.policy, r.status, r.finished, r.rejected, r.stalled, r.keptUp])
    ).toEqual([
      ["total-tokens", "Completed", 0, 120, 0, false],
      ["smg/round-robin", "Completed", 120, 0, 0, true]
    ])
    // simulate on the same cell prints the same status text
    io.out = ""
    expect(
      await main([
        "node",
        "loadledger",
        "simulate",
        "--trace",
        pinned,
        "--policies",
        "total-tokens",
        "--limit",
        "120",
        "--quiet"
      ])
    ).toBe(2)
    expect(io.out).toContain("│ incomplete 0/120, 120 rejected │")
  }, 60_000)

  it("runs a vLLM front end on the rows it names: its own block, the simulator's result for those rows", async () => {
    const file = join(dir, "rows.yaml")
    writeFileSync(
      file,
      `name: rows\nlimit: 120\ntraces: [{ path: ${mooncake}, rates: [0.3] }]\nfrontEnds: [{ engine: vllm, clients: 4 }, { engine: vllm, clients: 4, coordinatorRows: vllm }]\npolicies: [ledger-balanced]\n`
    )
    const o = join(dir, "rows-out")
    expect(await main(["node", "loadledger", "sweep", file, "--out", o, "--workers", "0", "--quiet"])).toBe(0)
    expect(io.out).toContain("**conversation_trace at 0.3x, DP 8, vllm x4**")
    expect(io.out).toContain("**conversation_trace at 0.3x, DP 8, vllm x4, vllm rows**")
    const rows: ReadonlyArray<SummaryRow> = JSON.parse(readFileSync(join(o, "summary.json"), "utf8")).rows
    expect(rows.map((r) => [r.id, r.frontEnd])).toEqual([
      ["conversation_trace_r0.3_dp8_vllm4_ledger-balanced", "vllm x4"],
      ["conversation_trace_r0.3_dp8_vllm4-vllmrows_ledger-balanced", "vllm x4, vllm rows"]
    ])
    // the cell ran with the rows it names: the simulator's own result for that config
    const [ext, vllm] = readCells(o, expandCells(parseSpec(readFileSync(file, "utf8"), file))).results
    const direct = (coordinatorRows?: "vllm") =>
      simulate(
        simConfigFor({ ...ext!.cell, coordinatorRows }),
        scaleTrace(readTraceFile(mooncake), { rateScale: 0.3, limit: 120 }),
        findPolicy("ledger-balanced")!
      )
    expect(vllm!.result).toEqual(direct("vllm"))
    expect(ext!.result).toEqual(direct())
    expect(vllm!.result.requestsPerRank).not.toEqual(ext!.result.requestsPerRank)
  }, 60_000)

  it("fails before running on a bad spec, shard or output folder", async () => {
    const file = join(dir, "bad.yaml")
    writeFileSync(file, "traces: [a.jsonl]\nrates: [1]\npolicies: [total-tokens, total-tokens]\n")
    expect(await main(["node", "loadledger", "sweep", file])).toBe(1)
    expect(io.err).toContain('policies[1]: policy "total-tokens" is listed twice')
    writeFileSync(file, specText)
    expect(await main(["node", "loadledger", "sweep", file, "--shard", "3/2"])).toBe(1)
    expect(io.err).toContain("--shard: must be i/n")
    expect(await main(["node", "loadledger", "sweep", file, "--out", join(file, "under-a-file")])).toBe(1)
    expect(io.err).toContain(`cannot write to ${join(file, "under-a-file")}: ENOTDIR`)
    expect(await main(["node", "loadledger", "sweep", join(dir, "missing.yaml")])).toBe(1)
    expect(io.err).toContain("spec file not found")
  })
})

describe("the Kubernetes Indexed Job example", () => {
  it("shards as many ways as it has completions, and its spec parses", async () => {
    const { parseAllDocuments } = await import("yaml")
    const text = readFileSync(new URL("../../../examples/sweeps/k8s/job.yaml", import.meta.url), "utf8")
    const docs = parseAllDocuments(text).map((d) => d.toJS())
    const job = docs.find((d) => d.kind === "Job")
    expect(job.spec.completionMode).toBe("Indexed")
    const c = job.spec.template.spec.containers[0]
    const shards = Number(c.env.find((e: { name: string }) => e.name === "SHARDS").value)
    expect(job.spec.completions).toBe(shards)
    expect(job.spec.parallelism).toBe(shards)
    expect(c.args[0]).toContain("--shard $((JOB_COMPLETION_INDEX + 1))/$SHARDS")
    const spec = parseSpec(
      docs.find((d) => d.kind === "ConfigMap").data["compare.yaml"],
      "/spec/compare.yaml"
    )
    expect(spec.policies.length).toBeGreaterThan(5)
    const merge = parseAllDocuments(
      readFileSync(new URL("../../../examples/sweeps/k8s/merge-job.yaml", import.meta.url), "utf8")
    )[0]!.toJS()
    expect(merge.spec.template.spec.containers[0].args[0]).toContain(
      "sweep merge /results/merged /results/shard-*"
    )
  })
})
