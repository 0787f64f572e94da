import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { mooncake, runCaptured } from "./runCli.js"

// 240 Mooncake requests in 4 windows of 60 on two ranks, a loose SLO: a few probes each
const small = [
  "--trace",
  mooncake,
  "--limit",
  "240",
  "--windows",
  "4",
  "--dp",
  "2",
  "--slo",
  "ttft=10s,tpot=100ms,attain=0.9",
  "--precision",
  "0.05"
]
const policies = ["--policies", "round-robin,total-tokens,vllm-kv-pressure"]

interface Row {
  policy: string
  kind: string
  engine: string
  goodput: { rate: number; requestsPerSecond: number; ci: [number, number]; windows: Array<number> }
  shareOfBound: number
  verdict?: { verdict: string; ratio?: number; ci?: [number, number]; excludedWindows?: number }
  curve: Array<{ rate: number; requestsPerSecond: number; attainment: number; ci: [number, number] }>
}

describe("loadledger goodput", () => {
  it("ranks each engine's policies with intervals, shares of the bound and paired verdicts (JSON)", async () => {
    const { code, out } = await runCaptured("goodput", ...small, ...policies, "--json", "--jobs", "1")
    expect(code).toBe(0)
    const doc = JSON.parse(out)
    expect(doc.slo).toMatchObject({ ttftSeconds: 10, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" })
    expect(doc.slo.description).toBe(
      "TTFT <= 10 s and TPOT <= 100 ms, joint per request, attained by >= 90% of requests"
    )
    expect(doc.method).toMatchObject({ windows: 4, confidence: 0.95, precision: 0.05 })
    // Mooncake has block hashes, no prompt tokens: the token ids token-keyed policies route on are synthesised
    expect(doc.tokenIds).toMatchObject({
      origin: "block-hashes",
      requests: { blockHashes: 240, synthetic: 0 }
    })
    // vLLM's balancer on the vllm engine, the others on sglang: two boards
    expect(doc.engines.map((e: { engine: string }) => e.engine)).toEqual(["sglang", "vllm"])
    const sglang = doc.engines[0]
    expect(sglang.policies.map((r: Row) => r.kind)).toEqual(["policy", "policy", "clairvoyant", "bound"])
    const bound = sglang.policies.at(-1) as Row
    for (const r of sglang.policies as Array<Row>) {
      const g = r.goodput
      expect(g.windows).toHaveLength(4)
      expect(g.requestsPerSecond).toBeCloseTo(g.windows.reduce((a, x) => a + x, 0) / 4, 10)
      expect(g.ci[0]).toBeLessThanOrEqual(g.requestsPerSecond)
      expect(g.ci[1]).toBeGreaterThanOrEqual(g.requestsPerSecond)
      expect(g.rate).toBeCloseTo(g.requestsPerSecond / doc.traceRequestsPerSecond, 10)
      expect(r.shareOfBound).toBeCloseTo(g.requestsPerSecond / bound.goodput.requestsPerSecond, 10)
      // the law: nothing beats the bound, window by window, beyond the bisection's precision
      for (const [k, x] of g.windows.entries())
        expect(x).toBeLessThanOrEqual(bound.goodput.windows[k]! * 1.05 + 1e-9)
      // the curve: attainment at 0.7x .. 1.3x of the best goodput, falling (or level) with the rate
      expect(r.curve.map((p) => p.requestsPerSecond / sglang.policies[0].goodput.requestsPerSecond)).toEqual(
        [0.7, 0.85, 1, 1.15, 1.3].map((x) => expect.closeTo(x, 10))
      )
    }
    // ranked by goodput; the best has verdict "best", the other a paired verdict
    const [first, second] = sglang.policies as Array<Row>
    expect(sglang.best).toBe(first!.policy)
    expect(first!.goodput.requestsPerSecond).toBeGreaterThanOrEqual(second!.goodput.requestsPerSecond)
    expect(first!.verdict).toEqual({ verdict: "best" })
    // on this small sample total-tokens misses the SLO in a window where round-robin meets it at
    // a low rate: no ratio there, so "not comparable", with the reason
    expect(second!.policy).toBe("total-tokens")
    expect(second!.verdict).toMatchObject({
      verdict: "not comparable",
      reason: "the SLO is unattainable in window 1 for the first policy only",
      excludedWindows: 1
    })
    expect(second!.goodput.windows[0]).toBe(0)
    // every pair of policies and the clairvoyant one: 3 pairs on sglang, 1 on vllm
    expect(sglang.verdicts).toHaveLength(3)
    expect(doc.engines[1].verdicts).toHaveLength(1)
  }, 120_000)

  it("gives the same leaderboard on worker threads as in one thread", async () => {
    const args = ["goodput", ...small, "--policies", "round-robin,total-tokens", "--json", "--no-curves"]
    const one = JSON.parse((await runCaptured(...args, "--jobs", "1")).out)
    const two = JSON.parse((await runCaptured(...args, "--jobs", "2")).out)
    const strip = (d: { wallSeconds?: number }) => ({ ...d, wallSeconds: 0 })
    expect(strip(two)).toEqual(strip(one))
    expect(one.engines[0].policies[0].curve).toEqual([])
  }, 120_000)

  it("prints the ranked table, the SLO, the method and how to read it; writes the curves report", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loadledger-goodput-"))
    const report = join(dir, "goodput.html")
    const { code, out } = await runCaptured(
      "goodput",
      ...small,
      "--policies",
      "round-robin,total-tokens",
      "--jobs",
      "1",
      "--report",
      report
    )
    expect(code).toBe(0)
    const lines = out.split("\n")
    expect(lines[0]).toMatch(
      /^goodput of glm-5\.3 on h200, DP 2, 240 requests from .* \([\d.]+ requests\/s\)$/
    )
    expect(lines[1]).toBe(
      "SLO: TTFT <= 10 s and TPOT <= 100 ms, joint per request, attained by >= 90% of requests"
    )
    expect(out).toMatch(/sglang engine: best (round-robin|total-tokens)/)
    expect(out).toContain("balance-bound (ceiling)")
    expect(out).toContain("clairvoyant (reference)")
    expect(out).toContain("How to read it:")
    const html = readFileSync(report, "utf8")
    expect(html).toContain("SLO attainment against arrival rate (sglang engine)")
    const data = JSON.parse(
      html.match(/<script type="application\/json" id="chart-data">(.*?)<\/script>/s)![1]!
    )
    // per row: the line, then the band's lower edge and its width
    expect(data[0].option.series).toHaveLength(4 * 3)
  }, 120_000)

  it("refuses a bad SLO or confidence before any replay", async () => {
    const bad = await runCaptured("goodput", "--trace", mooncake, "--slo", "ttft=2s")
    expect(bad.code).toBe(1)
    expect(bad.err).toContain("--slo: the SLO needs a tpot bound, e.g. tpot=100ms")
    const conf = await runCaptured("goodput", "--trace", mooncake, "--confidence", "95")
    expect(conf.err).toContain("--confidence must be in (0, 1)")
    // a misspelled preset lists the known ones (it pointed to a `list` command that does not exist)
    const preset = await runCaptured("goodput", "--trace", mooncake, "--slo", "mlperf-deepseek-r2")
    expect(preset.code).toBe(1)
    expect(preset.err).toMatch(
      /unknown SLO preset "mlperf-deepseek-r2" \(did you mean "mlperf-deepseek-r1"\?\); known: mlperf-llama2-70b, .*mlperf-deepseek-r1,/
    )
    // an unwritable report is refused before the replays (it failed after the whole run: every
    // policy on the whole trace, minutes, well past this test's time-out)
    const report = await runCaptured("goodput", "--trace", mooncake, "--report", "/no/such/dir/g.html")
    expect(report.code).toBe(1)
    expect(report.err).toContain("--report")
    expect(report.out).toBe("")
  })
})

describe("loadledger goodput's warm start", () => {
  it("ends every window's search on a crossing of the SLO, as a cold search does, in fewer replays", async () => {
    const args = [
      "goodput",
      ...small,
      "--policies",
      "round-robin,total-tokens",
      "--json",
      "--no-curves",
      "--jobs",
      "1"
    ]
    const warm = JSON.parse((await runCaptured(...args)).out)
    const cold = JSON.parse((await runCaptured(...args, "--no-warm-start")).out)
    type Probe = { rate: number; passed: boolean }
    type Doc = { engines: Array<{ policies: Array<Row & { probes: Array<Array<Probe>> }> }> }
    const rows = (d: Doc) => d.engines[0]!.policies
    const probes = (d: Doc) => rows(d).reduce((n, r) => n + r.probes.reduce((m, w) => m + w.length, 0), 0)
    expect(
      rows(warm)
        .map((r) => r.policy)
        .sort()
    ).toEqual(
      rows(cold)
        .map((r) => r.policy)
        .sort()
    )
    for (const r of [...rows(warm), ...rows(cold)])
      for (const [k, g] of r.goodput.windows.entries()) {
        const ps = r.probes[k]!
        // goodput 0: nothing passed; else some rate passed and one at most 5% (--precision) above it failed
        const crossing = ps.some(
          (p) => p.passed && ps.some((q) => !q.passed && q.rate > p.rate && q.rate <= p.rate * 1.05)
        )
        expect(g === 0 ? ps.every((p) => !p.passed) : crossing).toBe(true)
      }
    expect(probes(warm)).toBeLessThan(probes(cold))
  }, 120_000)
})
