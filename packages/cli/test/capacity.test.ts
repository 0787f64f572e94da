import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { captureOutput } from "./captureOutput.js"
import { loadledger, mooncake } from "./runCli.js"

const io = captureOutput()
const run = (...args: Array<string>) => loadledger("capacity", ...args)
// 300 Mooncake requests on two ranks: a few probes of a short trace, in this thread
const small = ["--trace", mooncake, "--limit", "300", "--dp", "2", "--precision", "0.05", "--jobs", "1"]

describe("loadledger capacity", () => {
  it("prints every probe, the capacity and the rates at 70% and 90% of it", async () => {
    expect(await run(...small)).toBe(0)
    const lines = io.out.trim().split("\n")
    expect(lines[0]).toBe(
      `capacity of glm-5.3 on h200, DP 2, sglang x1, total-tokens, 300 requests from ${mooncake}`
    )
    const m = io.out.match(/capacity: ([\d.]+)x \(([\d.]+) requests\/s; ([\d.]+)x falls behind\)/)
    expect(m).not.toBeNull()
    const [rate, failed] = [Number(m![1]), Number(m![3])]
    expect(failed / rate).toBeLessThanOrEqual(1.05 + 1e-3)
    const share = (line: string | undefined, pct: number) =>
      Number(line?.match(new RegExp(`^${pct}% of capacity: ([\\d.]+)x$`))?.[1])
    expect(share(lines.at(-3), 70) / rate).toBeCloseTo(0.7, 2)
    expect(share(lines.at(-2), 90) / rate).toBeCloseTo(0.9, 2)
    // and where to go for a verdict between policies
    expect(lines.at(-1)).toMatch(/^to rank policies by .* loadledger goodput --trace/)
    // each probe line: rate, backlog, kept up (the capacity's row says yes, the failed one no)
    const probes = lines.slice(2, -4).map((l) => l.trim().split(/\s+/))
    expect(probes.length).toBeGreaterThan(2)
    expect(probes.find((p) => Number(p[0]) === Number(rate.toPrecision(4)))?.[2]).toBe("yes")
    expect(probes.find((p) => Number(p[0]) === Number(failed.toPrecision(4)))?.[2]).toBe("no")
  })

  it("--json gives the same search as data; --at picks the shares", async () => {
    expect(await run(...small, "--json", "--quiet", "--at", "0.5,1")).toBe(0)
    const out = JSON.parse(io.out)
    expect(out.at.map((a: { share: number }) => a.share)).toEqual([0.5, 1])
    expect([out.json, out.quiet, out.engine, out.frontEnds]).toEqual([undefined, undefined, "sglang", 1])
    expect(out.at[1].rate).toBe(out.rate)
    expect(out.probes.find((p: { rate: number }) => p.rate === out.rate).keepsUp).toBe(true)
    expect(out.probes.find((p: { rate: number }) => p.rate === out.failedRate).keepsUp).toBe(false)
    expect(io.err).toBe("")
  })

  it("--jobs 2 (probes on two worker threads, speculatively) prints the same JSON as --jobs 1", async () => {
    const output = async (jobs: string, ...more: Array<string>) => {
      io.out = ""
      expect(await run(...small, "--jobs", jobs, ...more)).toBe(0)
      return io.out
    }
    const one = await output("1", "--json", "--quiet")
    const two = await output("2", "--json", "--quiet")
    expect(JSON.parse(two)).toEqual(JSON.parse(one))
    // every probe, in order (the table prints them as they come, through the same onProbe)
    expect(JSON.parse(two).probes.length).toBeGreaterThan(3)
    expect(JSON.parse(one).jobs).toBeUndefined()
  }, 120_000)

  it("bad input exits 1 with one line naming it, before any simulation", async () => {
    for (const [args, message] of [
      [["--policy", "nope"], 'unknown policy "nope"'],
      [["--at", "0.7,90"], "--at must be comma-separated shares in (0, 1]"],
      [["--model", "gpt-9"], 'unknown model "gpt-9"'],
      // no room for a KV pool: what would fit (was "no room for a KV pool" alone)
      [["--model", "llama2-70b", "--gpu", "h100-80gb"], "llama2-70b fits at tensor parallel 1 on b200"],
      [["--precision", "0"], "--precision"],
      [["--tolerance", "5"], "--tolerance must be below 1"],
      [["--front-ends", "4"], "--front-ends counts vLLM API servers"],
      [["--limit", "99"], "the trace has 99 requests: at least 100"],
      // on threads too: the search that cannot start says so before any thread starts
      [["--limit", "99", "--jobs", "2"], "the trace has 99 requests: at least 100"],
      [["--jobs", "0"], '--jobs must be a positive integer, got "0"']
    ] as const) {
      expect(await run(...small, ...args)).toBe(1)
      expect(io.err).toContain(message)
      expect(io.out).toBe("")
    }
  })
})

describe("loadledger capacity with a policy that rejects requests", () => {
  it("total-tokens on requests pinned to a rank outside DP 8 (InvalidRoutedRank): a clear error after two probes, not a capacity", async () => {
    // smg/prefix-hash on the Azure trace was the example until every request got token ids; a pin
    // past the ranks is refused by every policy that honours pins, whatever the rate
    const rows = Array.from({ length: 120 }, (_, i) => `${i * 0.5},${300 + i},20,9`)
    const file = join(mkdtempSync(join(tmpdir(), "loadledger-cap-")), "pinned.csv")
    writeFileSync(file, `arrival_seconds,input_length,output_length,dp_rank\n${rows.join("\n")}\n`)
    expect(await run("--trace", file, "--policy", "total-tokens", "--jobs", "1")).toBe(1)
    expect(io.err).toBe(
      "loadledger: total-tokens rejected 120 of 120 requests at 1x and 120 at 0.5x: the rejections do not fall with the rate (too large for the KV pool or the request limit, or the policy cannot place them), so no rate serves every request\n"
    )
    // each probe line: not kept up, 120 rejected (the last column)
    const probes = io.out
      .trim()
      .split("\n")
      .slice(2)
      .map((l) => l.trim().split(/\s+/))
    expect(probes.map((p) => [p[0], p[2], p.at(-1)])).toEqual([
      ["1.000", "no", "120"],
      ["0.5000", "no", "120"]
    ])
  })
})
