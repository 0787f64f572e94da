import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { policyEntries } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it, vi } from "vitest"
import { gpusFitting } from "../src/internal/simSetup.js"
import { captureOutput } from "./captureOutput.js"
import { loadledger, mooncake, reportChartIds, simulateMooncake } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-sim-"))
/** Write `text` to `name` in the test's directory; returns its path. */
const writeTemp = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const io = captureOutput()
/** The Azure 2023 conversation trace (the fixture copy); its requests fit a 50,000-token pool. */
const azure = new URL("../../../fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv", import.meta.url)
  .pathname

const run = (...args: Array<string>) => loadledger("simulate", ...args)

describe("loadledger simulate", () => {
  it("--help lists every registered policy, model and GPU", async () => {
    expect(await run("--help")).toBe(0)
    // names may hold regex metacharacters (`vllm-kv-pressure+kv-admission`): escaped
    const quote = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    for (const e of policyEntries())
      expect(io.out).toMatch(new RegExp(`\\n  ${quote(e.name)} +\\[${e.engine}\\]`))
    // each model with its preset TP and the GPUs it leaves a KV pool on
    for (const m of Object.keys(models)) expect(io.out).toMatch(new RegExp(`\\n  ${m} +TP ${models[m]!.tp} `))
    expect(io.out).toMatch(/\n {2}llama2-70b +TP 1 +b200, gb200\n/)
    expect(io.out).toMatch(
      /\n {2}bloom-176b +TP 8 +a100-80gb, h100-80gb, h100-80gb-pcap, h200, b200, gb200\n/
    )
    for (const g of Object.keys(gpus)) expect(io.out).toContain(g)
    expect(io.out).toContain("--quiet")
    for (const flag of [
      "--prefill-interval <k>",
      "--no-dummy-batches",
      "--max-request-tokens <n>",
      "--stall-steps <n>"
    ])
      expect(io.out).toContain(flag)
  })

  it("--help prints each policy's whole first sentence, wrapped under its column, never cut with '...'", async () => {
    expect(await run("--help")).toBe(0)
    // the policy table, up to the examples (whose command lines are as long as they are)
    const help = io.out.slice(io.out.indexOf("Policies (--policies"), io.out.lastIndexOf("\nExamples:\n"))
    expect(help).not.toContain("...")
    // re-join the wrapped lines: every description's first sentence appears whole
    const joined = help.replace(/\n {40,}/g, " ")
    for (const e of policyEntries()) {
      const one = e.description.replace(/\s+/g, " ").trim()
      const cut = one.search(/[.;](\s|$)/)
      expect(joined).toContain(cut < 0 ? one : one.slice(0, cut))
    }
    for (const line of help.split("\n")) expect(line.length).toBeLessThanOrEqual(100)
  })

  it("progress: one line every 2 s on a non-terminal stderr with --progress, nothing with --quiet", async () => {
    let t = 0
    vi.spyOn(performance, "now").mockImplementation(() => (t += 150)) // 0.15 s per clock read
    await simulateMooncake("round-robin,total-tokens", 100, "--json", "--progress")
    const lines = io.err.trim().split("\n")
    expect(lines.length).toBeGreaterThan(1)
    for (const l of lines.slice(0, -1))
      expect(l).toMatch(
        /^progress: \d+\/200 requests \(\d+\.\d%\) \| policy [12]\/2 (round-robin|total-tokens) \| elapsed \d+\.\ds \| ETA (\d+\.\ds|\d+m\d\ds)$/
      )
    expect(lines.at(-1)).toMatch(/^done: 200\/200 requests in \d+\.\ds$/)
    // elapsed grows by at least 2 s from line to line
    const elapsed = lines.slice(0, -1).map((l) => Number(l.match(/elapsed (\d+\.\d)s/)![1]))
    for (let i = 1; i < elapsed.length; i++) expect(elapsed[i]! - elapsed[i - 1]!).toBeGreaterThanOrEqual(2)
    JSON.parse(io.out) // stdout stays clean JSON
    io.err = ""
    await simulateMooncake("round-robin", 100, "--quiet")
    expect(io.err).toBe("")
    await simulateMooncake("round-robin", 100) // a non-terminal without --progress: none either
    expect(io.err).toBe("")
  })

  it("prints one table row per policy", async () => {
    const code = await simulateMooncake("round-robin,total-tokens", 200)
    expect(code).toBe(0)
    expect(io.out).toContain("200 requests from")
    expect(io.out).toContain("glm-5.3 on h200, DP 8")
    const rows = io.out.split("\n").filter((l) => /round-robin|total-tokens/.test(l))
    expect(rows).toHaveLength(2)
    // the trace's own rate is far above a DP-8 group's capacity (0.44x): finished, but behind
    for (const r of rows) expect(r).toContain("behind 200/200")
  })

  it("smg/prefix-hash routes the Azure trace (no prompt tokens): synthesised token ids, said in one line and in the JSON", async () => {
    // was a row of dashes and exit 2: every request rejected for want of tokens
    const args = ["--trace", azure, "--policies", "smg/prefix-hash,round-robin", "--limit", "300", "--quiet"]
    expect(await run(...args)).toBe(0)
    const lines = io.out.split("\n")
    expect(lines[1]).toBe(
      "token ids: synthesised per request id (the trace has no prompt tokens or block hashes; distinct for every request), the first 256 of each prompt"
    )
    expect(lines.find((l) => l.includes("smg/prefix-hash"))).toContain("ok 300/300")
    io.out = ""
    expect(await run(...args, "--json")).toBe(0)
    const doc = JSON.parse(io.out)
    const synthetic = {
      origin: "synthetic",
      requests: { trace: 0, blockHashes: 0, synthetic: 300 },
      maxSynthesisedTokens: 256
    }
    expect(doc.tokenIds).toEqual(synthetic)
    for (const r of doc.results) {
      expect(r.tokenIds).toEqual(synthetic)
      expect(r.requests.rejected).toBe(0)
    }
    // Mooncake's block hashes: ids from the blocks
    io.out = ""
    await simulateMooncake("round-robin", 100)
    expect(io.out.split("\n")[1]).toMatch(/^token ids: synthesised from the trace's block hashes \(/)
  })

  it("--json: the same numbers machine-readable; round-robin spreads 200 requests 25 per rank", async () => {
    const code = await simulateMooncake("round-robin,total-requests", 200, "--json")
    expect(code).toBe(0)
    const doc = JSON.parse(io.out)
    expect(doc).toMatchObject({ requests: 200, model: "glm-5.3", gpu: "h200", dp: 8 })
    expect(doc.results.map((r: { policy: string }) => r.policy)).toEqual(["round-robin", "total-requests"])
    expect(doc.results[0].requestsPerRank).toEqual(Array(8).fill(25))
    for (const r of doc.results) {
      expect(r.engine).toBe("sglang")
      expect(r.requests).toEqual({ total: 200, finished: 200, unfinished: 0, rejected: 0, stalled: 0 })
      expect(r.ttftSeconds.p50).toBeGreaterThan(0)
      expect(r.imbalanceHistogram.le).toEqual([
        1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64
      ])
    }
  })

  it("bloom-176b on h100-80gb (preset TP 8): a KV pool of 50,706 tokens per rank serves the first 1,000 Azure requests", async () => {
    const json = async (...extra: Array<string>) => {
      io.out = ""
      const code = await run(
        "--trace",
        azure,
        "--policies",
        "total-tokens",
        "--limit",
        "1000",
        "--model",
        "bloom-176b",
        "--gpu",
        "h100-80gb",
        "--json",
        "--quiet",
        ...extra
      )
      const doc = JSON.parse(io.out)
      return {
        code,
        pool: doc.kvPoolTokens,
        outcome: doc.results[0].outcome,
        ttftP50: doc.results[0].ttftSeconds.p50
      }
    }
    const now = await json()
    expect(now).toMatchObject({ code: 0, pool: 50_706, outcome: "ok 1000/1000" })
    expect(now.ttftP50).toBeLessThan(0.2)
    // the pool before the TP rule (whole-model KV per token on every GPU): 75 requests never fit
    const before = await json("--kv-pool-tokens", "3202")
    expect(before).toMatchObject({ code: 2, pool: 3202, outcome: "incomplete 925/1000, 75 rejected" })
    expect(before.ttftP50).toBeGreaterThan(100)
  })

  it("--policy (the name capacity takes) is --policies: the same runs; both at once, or neither, is one error line", async () => {
    const json = async (...args: Array<string>) => {
      io.out = ""
      expect(await run("--trace", mooncake, "--limit", "50", "--json", "--quiet", ...args)).toBe(0)
      return JSON.parse(io.out)
    }
    const alias = await json("--policy", "round-robin,total-tokens")
    expect(alias.results.map((r: { policy: string }) => r.policy)).toEqual(["round-robin", "total-tokens"])
    expect(alias).toEqual(await json("--policies", "round-robin,total-tokens"))
    for (const args of [
      ["--policy", "round-robin", "--policies", "total-tokens"],
      ["--policies", "total-tokens", "--policy", "round-robin"]
    ]) {
      io.err = ""
      io.out = ""
      expect(await run("--trace", mooncake, "--limit", "50", ...args)).toBe(1)
      expect(io.err).toBe("error: --policy is --policies under another name: give one of them\n")
      expect(io.out).toBe("")
    }
    io.err = ""
    // neither: the demo's five reference policies (issue 36)
    io.out = ""
    expect(await run("--trace", mooncake, "--limit", "50")).toBe(0)
    expect(io.out).toContain("follow-bootstrap-room")
    // help shows the one option and says the other name works
    io.out = ""
    expect(await run("--help")).toBe(0)
    expect(io.out.replace(/\s+/g, " ")).toContain(
      "--policies <list> comma-separated policy names, each once, or all (listed below; default: the demo's five references) (--policy works too)"
    )
    expect(io.out).not.toContain("--policy <")
  })

  it("--coordinator-rows: vLLM's own rows reach the vLLM front ends; results differ only for policies reading the rest", async () => {
    const runs = async (rows?: string) => {
      io.out = ""
      const extra = ["--engine", "vllm", "--front-ends", "4", "--rate-scale", "0.3", "--json", "--quiet"]
      const code = await simulateMooncake(
        "vllm-kv-pressure,total-tokens",
        300,
        ...extra,
        ...(rows === undefined ? [] : ["--coordinator-rows", rows])
      )
      expect(code).toBe(0)
      return JSON.parse(io.out).results.map((r: { requestsPerRank: Array<number> }) => r.requestsPerRank)
    }
    const [kvDefault, tokensDefault] = await runs()
    expect(await runs("extended")).toEqual([kvDefault, tokensDefault])
    const [kvVllm, tokensVllm] = await runs("vllm")
    // vllm-kv-pressure reads only [waiting, running, kv]; total-tokens reads the tokens
    expect(kvVllm).toEqual(kvDefault)
    expect(tokensVllm).not.toEqual(tokensDefault)
  }, 60_000)

  it("--rate-scale compresses arrivals; --dp changes the group", async () => {
    await simulateMooncake("round-robin", 50, "--dp", "2", "--rate-scale", "2", "--json")
    const doc = JSON.parse(io.out)
    expect(doc.dp).toBe(2)
    expect(doc.results[0].requestsPerRank).toEqual([25, 25])
  })

  it("--report writes one self-contained HTML page: ECharts inlined, chart data, no network", async () => {
    const file = join(dir, "report.html")
    const code = await simulateMooncake("round-robin,total-tokens", 100, "--report", file)
    expect(code).toBe(0)
    expect(io.out).toContain(`report written to ${file}`)
    const html = readFileSync(file, "utf8")
    expect(html.startsWith("<!doctype html>")).toBe(true)
    expect(html).not.toMatch(/(src|href)="https?:/)
    expect(html).toContain("Apache ECharts")
    const data = JSON.parse(
      html.match(/<script type="application\/json" id="chart-data">(.*?)<\/script>/s)![1]!
    )
    expect(data.map((c: { id: string }) => c.id)).toEqual(reportChartIds(2))
    expect(html).toContain("round-robin (sglang): requests on each rank over time")
    // the summary table: one row per policy
    expect(html.match(/<tbody>([\s\S]*?)<\/tbody>/)![1]!.match(/<tr>/g)).toHaveLength(2)
  })

  it("reads the generic CSV format", async () => {
    const file = writeTemp("t.csv", "arrival_seconds,input_length,output_length\n0,100,5\n0.1,200,5\n")
    const code = await run("--trace", file, "--policies", "total-requests", "--json", "--dp", "2")
    expect(code).toBe(0)
    expect(JSON.parse(io.out).results[0].requests.finished).toBe(2)
  })

  describe("bad input: one clear line, exit 1", () => {
    /** `simulate ...args` exits 1 writing one stderr line: `loadledger: <line>` exactly, or matching a RegExp. */
    const exitsWithLine = async (args: Array<string>, line: string | RegExp) => {
      io.err = ""
      expect(await run(...args)).toBe(1)
      if (typeof line === "string") expect(io.err).toBe(`loadledger: ${line}\n`)
      else expect(io.err).toMatch(line)
      expect(io.err.trim().split("\n")).toHaveLength(1)
    }
    it("missing file", async () => {
      await exitsWithLine(
        ["--trace", join(dir, "nope.jsonl"), "--policies", "round-robin"],
        `trace file not found: ${join(dir, "nope.jsonl")}`
      )
    })
    it("malformed row, with its line number", async () => {
      const file = writeTemp(
        "bad.jsonl",
        '{"timestamp": 0, "input_length": 10, "output_length": 1}\n{"timestamp": 1, "input_length": -3, "output_length": 1}\n'
      )
      await exitsWithLine(
        ["--trace", file, "--policies", "round-robin"],
        `${file} line 2: input_length must be a positive integer`
      )
    })
    it("malformed CSV row", async () => {
      const file = writeTemp(
        "bad.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\nyesterday,1,2\n"
      )
      await exitsWithLine(
        ["--trace", file, "--policies", "round-robin"],
        /^loadledger: .*bad\.csv line 3: TIMESTAMP must look like/
      )
    })
    it("unknown policy, listing the known ones", async () => {
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "round-robin,fastest"],
        /^loadledger: unknown policy "fastest"; loadledger list policies names all 68/
      )
    })
    it("a policy named twice is rejected before the trace is read", async () => {
      await exitsWithLine(
        ["--trace", join(dir, "nope.jsonl"), "--policies", "total-tokens,round-robin, total-tokens"],
        '--policies names "total-tokens" twice; give each policy once'
      )
    })
    it("a bad --report path is reported before any simulation", async () => {
      const missing = join(dir, "no-such-dir", "r.html")
      const t0 = performance.now()
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "round-robin", "--report", missing],
        `--report: directory ${join(dir, "no-such-dir")} does not exist`
      )
      expect(io.out).toBe("")
      expect(performance.now() - t0).toBeLessThan(2000) // no simulation of the 23k-request trace ran
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "round-robin", "--report", dir],
        `--report: ${dir} is a directory, not a file`
      )
      const notADir = writeTemp("plain-file", "x")
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "round-robin", "--report", join(notADir, "r.html")],
        `--report: ${notADir} is not a directory`
      )
    })
    it("--trace naming a directory", async () => {
      await exitsWithLine(
        ["--trace", dir, "--policies", "round-robin"],
        `--trace ${dir} is a directory, not a file`
      )
    })
    it("--coordinator-rows other than extended on a policy that would run on SGLang, or an unknown value", async () => {
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "vllm-kv-pressure,round-robin", "--coordinator-rows", "vllm"],
        "--coordinator-rows vllm applies to vLLM runs only, and round-robin would run on SGLang: add --engine vllm"
      )
      await exitsWithLine(
        ["--trace", mooncake, "--policies", "round-robin", "--coordinator-rows", "tokens"],
        /--coordinator-rows <rows>' argument 'tokens' is invalid/
      )
    })
    it("a model preset with no room for a KV pool on the GPU preset: what would fit, before the trace is read", async () => {
      // the trace does not exist: the fit check comes before it is read
      const onGpu = (model: string, gpu: string) => [
        "--trace",
        join(dir, "nope.jsonl"),
        "--policies",
        "round-robin",
        "--model",
        model,
        "--gpu",
        gpu
      ]
      // llama2-70b's preset is TP 1: its 138 GB of BF16 weights overflow one a100-80gb
      await exitsWithLine(
        onGpu("llama2-70b", "a100-80gb"),
        "llama2-70b does not fit on one a100-80gb at tensor parallel 1: its weights take 138.0 GB per GPU of the 70.4 GB it may use (88% of 80.0 GB), no room for a KV pool; at tensor parallel 2 each GPU would hold 8,695 tokens (--tp 2). llama2-70b fits at its preset tensor parallel 1 on --gpu b200, gb200; or set the pool by hand with --kv-pool-tokens N"
      )
      await exitsWithLine(
        onGpu("glm-5.3", "h100-80gb"),
        /no tensor-parallel size up to 8 leaves room\. glm-5\.3 fits at its preset tensor parallel 1 on --gpu h200, b200, gb200; or set the pool by hand with --kv-pool-tokens N$/m
      )
      // --kv-pool-tokens sets the pool by hand: no fit check
      io.err = ""
      expect(
        await run(
          "--trace",
          azure,
          "--policies",
          "round-robin",
          "--limit",
          "20",
          "--quiet",
          "--model",
          "llama2-70b",
          "--gpu",
          "a100-80gb",
          "--kv-pool-tokens",
          "50000"
        )
      ).toBe(0)
      expect(io.err).toBe("")
    })
    it("unknown model, bad --dp", async () => {
      const roundRobin = ["--trace", mooncake, "--policies", "round-robin"]
      await exitsWithLine(
        [...roundRobin, "--model", "gpt-9"],
        /^loadledger: unknown model "gpt-9"; known: .*glm-5\.3/
      )
      await exitsWithLine(
        [...roundRobin, "--dp", "0"],
        '--dp must be an integer from 1 to 4096 (the simulator\'s rank bound), got "0"'
      )
    })
  })
})

describe("gpusFitting (internal: its docstring example is not run as a test)", () => {
  it("the GPU presets a model fits at its preset TP, in the presets' order", () => {
    expect(gpusFitting("llama2-70b")).toEqual(["b200", "gb200"])
    expect(gpusFitting("glm-5.3")).toEqual(["h200", "b200", "gb200"])
    expect(gpusFitting("gpt-9")).toEqual([])
  })
})
