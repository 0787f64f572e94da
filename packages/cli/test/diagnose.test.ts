// Issue 33: `simulate --slow-rank / --rank-overhead / --emit-loads` and `diagnose FILE [--json]`.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { decodeV1Loads } from "@loadledger/schema"
import { describe, expect, it } from "vitest"
import { diagnosisText } from "../src/commands/diagnose.js"
import { diagnose } from "../src/diagnose/diagnose.js"
import { parseRankOverhead, parseSlowRank } from "../src/diagnose/faultFlags.js"
import { parseLoadsLines } from "../src/diagnose/readLoads.js"
import { runCaptured } from "./runCli.js"

const dir = mkdtempSync(join(tmpdir(), "loadledger-diagnose-"))
const azure = new URL("../../../fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv", import.meta.url)
  .pathname
const sim = (...args: Array<string>) =>
  runCaptured(
    "simulate",
    "--trace",
    azure,
    "--limit",
    "600",
    "--policies",
    "round-robin",
    "--dp",
    "4",
    "--json",
    "--quiet",
    ...args
  )

describe("simulate's fault flags", () => {
  it("--slow-rank 1:0.5 raises the sync wait and the tail ITL over the healthy run", async () => {
    const healthy = JSON.parse((await sim()).out).results[0]
    const slow = JSON.parse((await sim("--slow-rank", "1:0.5")).out).results[0]
    expect(healthy.status._tag).toBe("Completed")
    expect(slow.syncWaitShare).toBeGreaterThan(healthy.syncWaitShare + 0.2)
    expect(slow.itlSeconds.p99).toBeGreaterThan(1.5 * healthy.itlSeconds.p99)
  })

  it("a fault outside the group is a one-line error naming the field", async () => {
    const r = await sim("--slow-rank", "9:0.5")
    expect(r.err).toContain("rankFaults[0].dpRank must be an integer from 0 to 3, got 9")
  })

  it("parses windows and durations, and refuses bad values naming the flag", () => {
    expect(parseSlowRank("3:0.7@600-1200")).toEqual({
      dpRank: 3,
      speed: 0.7,
      fromSeconds: 600,
      toSeconds: 1200
    })
    expect(() => parseSlowRank("3:0.7@1200-600")).toThrow(/--slow-rank must be/)
    expect(() => parseSlowRank("x:0.7")).toThrow(/--slow-rank must be/)
    expect(parseRankOverhead("2:1.5ms")).toEqual({ dpRank: 2, overheadSeconds: 0.0015 })
    expect(parseRankOverhead("2:0.01")).toEqual({ dpRank: 2, overheadSeconds: 0.01 })
    expect(() => parseRankOverhead("2:fast")).toThrow(/--rank-overhead must be/)
  })
})

describe("--emit-loads then diagnose", () => {
  const file = join(dir, "loads.jsonl")

  it("writes /v1/loads lines that decode back, one row per rank", async () => {
    await sim("--slow-rank", "2:0.7", "--emit-loads", file)
    const lines = readFileSync(file, "utf8").trim().split("\n")
    expect(lines.length).toBeGreaterThan(20)
    for (const line of lines.slice(0, 5)) {
      const d = decodeV1Loads(JSON.parse(line))
      expect(d._tag).toBe("Success")
      if (d._tag === "Success") {
        expect(d.success.era).toBe("shm-v2")
        expect(d.success.response.loads.map((l) => l.dpRank)).toEqual([0, 1, 2, 3])
        expect(d.success.response.loads.every((l) => l.genThroughput !== undefined)).toBe(true)
      }
    }
  })

  it("diagnose --json names rank 2 hardware and the others ok", async () => {
    const r = await runCaptured("diagnose", file, "--json")
    expect(r.code).toBe(0)
    const d = JSON.parse(r.out)
    expect(d.ranks.map((x: { kind: string }) => x.kind)).toEqual(["ok", "ok", "hardware", "ok"])
    // at speed 0.7 its forward time is about 1/0.7 of the typical rank's
    expect(d.ranks[2].evidence.residual).toBeGreaterThan(0.3)
    expect(d.ranks[2].evidence.residual).toBeLessThan(0.5)
    expect(d.group.structuralLikely).toBe(false)
  })

  it("diagnose prints one line per rank, and names a bad line", async () => {
    const r = await runCaptured("diagnose", file)
    expect(r.out).toMatch(/^rank 2: hardware /m)
    expect(r.out).toMatch(/^group: structural slowness not indicated/m)
    const bad = join(dir, "bad.jsonl")
    writeFileSync(bad, '{"loads":[{"dp_rank":0,"utilization":0.5}]}\n')
    expect((await runCaptured("diagnose", bad)).err).toContain("line 1: loads[0] has no num_running_reqs")
  })
})

describe("a slow link is hardware: the published reports do not tell it from a slow GPU (stated limit)", () => {
  const file = join(dir, "link.jsonl")
  it("--slow-link 2:0.1 lengthens the collectives: rank 2 is hardware with causes gpu, cpu, link", async () => {
    const healthy = JSON.parse((await sim()).out).results[0]
    const linked = JSON.parse((await sim("--slow-link", "2:0.1", "--emit-loads", file)).out).results[0]
    expect(linked.syncWaitShare).toBeGreaterThan(healthy.syncWaitShare + 0.05)
    const d = JSON.parse((await runCaptured("diagnose", file, "--json")).out)
    expect(d.ranks.map((x: { kind: string }) => x.kind)).toEqual(["ok", "ok", "hardware", "ok"])
    expect(d.ranks[2].causes).toEqual(["gpu", "cpu", "link"])
    expect(d.ranks[0].causes).toBeUndefined()
    expect(d.ranks[2].evidence.residual).toBeGreaterThan(0.05)
    const text = (await runCaptured("diagnose", file)).out
    expect(text).toMatch(/^rank 2: hardware \(slow GPU, CPU or link: the reports do not tell them apart\)/m)
  })
})

describe("diagnose on hand-made reports", () => {
  const row = (dpRank: number, n: number, perReq: number, u: number) => ({
    dpRank,
    numRunningReqs: n,
    numUsedTokens: n * perReq,
    utilization: u,
    cacheHitRate: 0,
    prefillTokens: 0
  })
  // forward time = 0.2 + 0.02 per request: rank 0 holds twice the requests, and is slow only for that
  const reports = [10, 12, 14, 11, 9].map((n) =>
    [0, 1, 2, 3].map((r) => {
      const k = r === 0 ? 2 * n : n + ((r + n) % 3) - 1
      return row(r, k, 1000, 0.2 + 0.02 * k)
    })
  )
  it("more requests explained by load is load (count), not hardware", () => {
    const d = diagnose(reports)
    expect(d.ranks[0]!.kind).toBe("load")
    expect(d.ranks[0]!.skew).toBe("count")
    expect(d.ranks[0]!.evidence.residual).toBeCloseTo(0, 2)
    expect(d.ranks.slice(1).map((r) => r.kind)).toEqual(["ok", "ok", "ok"])
  })
  it("longer requests: load (length)", () => {
    const long = reports.map((r) =>
      r.map((l, i) => (i === 1 ? { ...l, numUsedTokens: l.numUsedTokens * 2 } : l))
    )
    expect(diagnose(long).ranks[1]!.skew).toBe("length")
  })
})

describe("expert hot spots (--expert-skew) and diagnose", () => {
  const file = join(dir, "hot.jsonl")
  const sim8 = (...args: Array<string>) => sim("--dp", "8", ...args)

  it("--expert-skew 1.2 raises the sync wait; EPLB with 32 redundant experts takes it back", async () => {
    const healthy = JSON.parse((await sim8()).out).results[0]
    const hot = JSON.parse((await sim8("--expert-skew", "1.2", "--emit-loads", file)).out).results[0]
    const cured = JSON.parse((await sim8("--expert-skew", "1.2", "--ep-num-redundant-experts", "32")).out)
      .results[0]
    expect(hot.status._tag).toBe("Completed")
    expect(hot.syncWaitShare).toBeGreaterThan(healthy.syncWaitShare + 0.04)
    expect(Math.abs(cured.syncWaitShare - healthy.syncWaitShare)).toBeLessThan(0.01)
  })

  it("diagnose calls it an expert hot spot, and no rank hardware or load", async () => {
    const r = await runCaptured("diagnose", file, "--json")
    const d = JSON.parse(r.out)
    expect(d.group.expertHotSpotLikely).toBe(true)
    expect(d.group.structuralLikely).toBe(true)
    expect(d.group.evidence.minResidual).toBeLessThan(-0.03)
    expect(d.ranks.filter((x: { kind: string }) => x.kind === "hardware" || x.kind === "load")).toEqual([])
    const text = (await runCaptured("diagnose", file)).out
    expect(text).toMatch(/^group: expert hot spot likely/m)
  })

  it("--deepep-mode low_latency: under the skew its sync wait is below normal mode's, and its steps do not move with the skew", async () => {
    const normal = JSON.parse((await sim8("--expert-skew", "1.2", "--deepep-mode", "normal")).out).results[0]
    const ll = JSON.parse((await sim8("--expert-skew", "1.2", "--deepep-mode", "low_latency")).out).results[0]
    const llMild = JSON.parse((await sim8("--expert-skew", "0.4", "--deepep-mode", "low_latency")).out)
      .results[0]
    expect(ll.status._tag).toBe("Completed")
    expect(ll.syncWaitShare).toBeLessThan(normal.syncWaitShare - 0.03)
    expect(llMild.syncWaitShare).toBeCloseTo(ll.syncWaitShare, 6)
    expect((await sim8("--deepep-mode", "fast")).err).toContain(
      '--deepep-mode must be normal, low_latency or auto, got "fast"'
    )
  })

  it("refuses an EPLB flag without a skew, a dense model, and a bad exponent, naming the flag", async () => {
    expect((await sim8("--enable-eplb")).err).toContain("add --expert-skew S")
    expect(
      (await sim("--expert-skew", "1", "--model", "llama2-70b", "--tp", "8", "--gpu", "h100-80gb")).err
    ).toContain("--expert-skew on llama2-70b: model.mlp must be an MoE layer")
    expect((await sim8("--expert-skew", "1", "--ep-num-redundant-experts", "3")).err).toContain(
      "ep must be an integer >= 1 dividing numExperts + numRedundantExperts (259), got 8"
    )
    expect((await sim8("--expert-skew", "hot")).err).toContain("--expert-skew must be S[:SEED]")
  })
})

describe("diagnose on a hand-made hot spot", () => {
  const row = (dpRank: number, u: number) => ({
    dpRank,
    numRunningReqs: 10,
    numUsedTokens: 10_000,
    utilization: u,
    cacheHitRate: 0,
    prefillTokens: 0
  })
  // equal loads; rank 1 holds the hot experts, rank 3 the cold ones (it finishes early and waits)
  const reports = [0, 1, 2, 3, 4].map((i) =>
    [0.8, 0.9, 0.8, 0.75].map((u, r) => row(r, u + 0.001 * ((i + r) % 2)))
  )
  it("peers spread above and below the typical rank at equal load: expert hot spot; the slow rank is expert, not hardware", () => {
    const d = diagnose(reports)
    expect(d.ranks.map((r) => r.kind)).toEqual(["ok", "expert", "ok", "ok"])
    expect(d.group.expertHotSpotLikely).toBe(true)
    expect(d.group.evidence.minResidual).toBeCloseTo(-0.06, 2)
    expect(d.group.evidence.expertSpread).toBeCloseTo(0.06, 2)
  })
  it("the same slow rank with its peers equal: hardware", () => {
    const one = reports.map((r) => r.map((l) => (l.dpRank === 3 ? { ...l, utilization: 0.8 } : l)))
    const d = diagnose(one)
    expect(d.ranks.map((r) => r.kind)).toEqual(["ok", "hardware", "ok", "ok"])
    expect(d.group.expertHotSpotLikely).toBe(false)
  })
})

describe("absent fields are unknown, not 0 (readLoads through to the evidence)", () => {
  // forward time 0.2 + 0.02 per running request; rank 0 holds twice the requests
  const entry = (r: number, n: number, extra: Record<string, number>) => ({
    dp_rank: r,
    num_running_reqs: n,
    num_used_tokens: 1000 * n,
    utilization: 0.2 + 0.02 * n,
    ...extra
  })
  const lines = (extra: (r: number) => Record<string, number>) =>
    [10, 12, 14, 11, 9]
      .map((n) =>
        JSON.stringify({
          loads: [0, 1, 2, 3].map((r) => entry(r, r === 0 ? 2 * n : n + ((r + n) % 3) - 1, extra(r)))
        })
      )
      .join("\n")
  const read = (text: string) => {
    const r = parseLoadsLines(text)
    if (!Array.isArray(r)) throw new Error(JSON.stringify(r))
    return r
  }

  it("no num_waiting_reqs, cache_hit_rate or prefill totals: absent in the rows and the evidence; the count skew is the running requests'", () => {
    const rows = read(lines(() => ({})))
    // rank 1 of the first report holds 11 requests; nothing it did not publish is in its row
    expect(rows[0]![1]).toEqual({
      dpRank: 1,
      numRunningReqs: 11,
      numUsedTokens: 11_000,
      utilization: 0.2 + 0.02 * 11
    })
    const d = diagnose(rows)
    expect(d.ranks[0]!.kind).toBe("load")
    expect(d.ranks[0]!.skew).toBe("count")
    expect(d.ranks[0]!.evidence.runningSkew).toBeCloseTo(0.6, 1)
    expect(d.ranks[0]!.evidence).not.toHaveProperty("requestSkew")
    expect(d.ranks[0]!.evidence).not.toHaveProperty("cacheHitRateGap")
    expect(d.group.evidence.fit).not.toHaveProperty("prefill")
    const text = diagnosisText(d)
    expect(text).toMatch(
      /^rank 0: load \(count\) .*running requests \+\d+\.\d% \(waiting not published\).*cache hit rate not published\)$/m
    )
  })

  it("published waiting counts make the count skew running + waiting", () => {
    const d = diagnose(read(lines((r) => ({ num_waiting_reqs: r === 0 ? 30 : 0 }))))
    expect(d.ranks[0]!.evidence.requestSkew).toBeGreaterThan(d.ranks[0]!.evidence.runningSkew + 0.5)
  })

  it("a rank that does not publish its cache hit rate is not cache-skewed; one that publishes 0 is", () => {
    const rate = (r: number): Record<string, number> => (r === 3 ? {} : { cache_hit_rate: 0.5 })
    const unknown = diagnose(read(lines(rate)))
    expect(unknown.ranks[3]!.kind).toBe("ok")
    expect(unknown.ranks[3]!.evidence.cacheHitRateGap).toBeUndefined()
    expect(unknown.ranks[1]!.evidence.cacheHitRateGap).toBeCloseTo(0, 6)
    const zero = diagnose(read(lines((r) => ({ cache_hit_rate: r === 3 ? 0 : 0.5 }))))
    expect(zero.ranks[3]!.kind).toBe("load")
    expect(zero.ranks[3]!.skew).toBe("cache")
    expect(zero.ranks[3]!.evidence.cacheHitRateGap).toBeCloseTo(0.375, 6)
  })

  it.each([["num_running_reqs"], ["num_used_tokens"], ["utilization"]])(
    "an entry without %s is a typed error naming the field",
    (field) => {
      const body = { loads: [entry(0, 3, {}), entry(1, 3, {})] }
      delete (body.loads[1] as Record<string, unknown>)[field]
      const r = parseLoadsLines(`${JSON.stringify({ loads: [entry(0, 3, {})] })}\n${JSON.stringify(body)}`)
      expect(r).toEqual({
        _tag: "LoadsLineError",
        line: 2,
        field: `loads[1].${field}`,
        message: `line 2: loads[1] has no ${field}`
      })
    }
  )
})

describe("the report's heat map marks each rank's kind", () => {
  it("--slow-rank 1:0.5 --report: rank 1's row is marked hardware, the others ok", async () => {
    const file = join(dir, "slow-report.html")
    const r = await sim("--slow-rank", "1:0.5", "--report", file)
    expect(r.code).toBe(0)
    const html = readFileSync(file, "utf8")
    expect(html).toContain('"rank 0 · ok","rank 1 · hardware","rank 2 · ok","rank 3 · ok"')
  })
})
