import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { aggregate, gpus, modelFromJson, models, stepTime, stepTimeFromAggregates } from "../src/index.js"

// DeepSeek sparse attention in the compute term (issue 17, item 5)
const gpu = gpus["h200"]!
const chunk = (m: string, prefix: number, tokens: number) =>
  stepTime({ model: models[m]!, gpu }, [{ decode: [], extend: [{ prefix, tokens }] }]).stepSeconds
// a whole input prefilled in 8K chunks (SGLang's default chunked prefill)
const prefill = (m: string, n: number) => {
  let s = 0
  for (let p = 0; p < n; p += 8192) s += chunk(m, p, Math.min(8192, n - p))
  return s
}

describe("glm-5.3-dsa: capped attention FLOPs plus the FP8 lightning indexer", () => {
  it("glm-5.3 (and its alias glm-5.3-dsa) runs DSA; glm-5.3-dense keeps the seed's dense arithmetic", () => {
    expect(models["glm-5.3-dense"]!.attention.arithmetic).toBe("dense")
    expect(models["glm-5.3-dense"]!.attention.sparseTopK).toBeUndefined()
    expect(models["glm-5.3-dsa"]!.attention).toEqual(models["glm-5.3"]!.attention)
    const a = models["glm-5.3"]!.attention
    expect(a.arithmetic).toBe("dsa")
    expect(a.sparseTopK).toBe(2048)
    expect(a.indexer).toEqual({ heads: 32, headDim: 128, bytesPerElement: 1, keyBytesPerTokenPerLayer: 132 })
  })

  it("below index_topk keys DSA costs what dense costs plus the indexer (within 3%)", () => {
    const dense = chunk("glm-5.3-dense", 0, 2048)
    const dsa = chunk("glm-5.3-dsa", 0, 2048)
    expect(dsa).toBeGreaterThanOrEqual(dense)
    expect(dsa / dense).toBeLessThan(1.03)
  })

  // The anchor (DeepSeek-V3.2-Exp report, Figure 3: cost per million tokens against token
  // position, prefilling on H800) is a marginal cost: what a token at position p costs. Here: an
  // 8K chunk (SGLang's chunked-prefill size) at prefix p, per token.
  const perToken = (m: string, p: number) => chunk(m, p, 8192) / 8192
  const positions = [7168, 8192, 16384, 32768, 65536, 122880]

  it("anchor: at positions over ~7K a token prefills 2-3x cheaper with DSA (7K-8K), and the gap only grows", () => {
    const rs = positions.map((p) => perToken("glm-5.3-dense", p) / perToken("glm-5.3-dsa", p))
    expect(rs[0]!).toBeGreaterThanOrEqual(2)
    expect(rs[1]!).toBeLessThanOrEqual(3)
    for (let i = 1; i < rs.length; i++) expect(rs[i]!).toBeGreaterThan(rs[i - 1]!)
    // the README's figures
    expect(rs.map((r) => r.toFixed(1))).toEqual(["2.4", "2.5", "3.5", "5.1", "7.4", "9.7"])
  })

  it("anchor: cost per token grows linearly with position (equal steps), DSA at about 1/16 of dense's slope", () => {
    const steps = [32768, 65536, 98304, 131072 - 8192]
    const slope = (m: string) => {
      const c = steps.map((p) => perToken(m, p))
      const d = c.slice(1).map((v, i) => (v - c[i]!) / (steps[i + 1]! - steps[i]!))
      for (const x of d) expect(Math.abs(x - d[0]!) / d[0]!).toBeLessThan(0.02)
      return d[0]!
    }
    // per token per 1K positions: dense 10.4 us, DSA 0.65 us (the FP8 indexer's 32 x (2 x 128 + 2)
    // FLOPs per pair at twice the BF16 peak, against MLA's 64 x 512 x 2)
    expect(slope("glm-5.3-dense") * 1024 * 1e6).toBeCloseTo(10.4, 0)
    expect(slope("glm-5.3-dsa") * 1024 * 1e6).toBeCloseTo(0.65, 1)
  })

  it("whole prompts (another quantity: the first tokens are as cheap either way) and the 120K-prefix chunk", () => {
    const ratio = (n: number) => prefill("glm-5.3-dense", n) / prefill("glm-5.3-dsa", n)
    expect([8192, 16384, 32768, 65536, 131072].map((n) => ratio(n).toFixed(2))).toEqual([
      "1.37",
      "1.98",
      "3.06",
      "4.80",
      "7.17"
    ])
    expect(chunk("glm-5.3-dense", 122880, 8192)).toBeCloseTo(11.05, 1)
    expect(chunk("glm-5.3-dsa", 122880, 8192)).toBeCloseTo(1.14, 1)
  })

  it("the indexer reads each index key once per query tile, not once per query", () => {
    const m = models["glm-5.3-dsa"]!
    const batch = { decode: [], extend: [{ prefix: 122880, tokens: 8192 }] }
    const a = aggregate(batch, 2048)
    expect(a.denseKvReadPairs).toBe(64 * 122880 + (128 * 63 * 64) / 2 + 8192)
    // running sums without denseKvReadPairs (a simulator's): the equal-chunk estimate is exact here
    const { denseKvReadPairs: _d, ...sums } = a
    const exact = stepTimeFromAggregates({ model: m, gpu }, [a]).stepSeconds
    expect(stepTimeFromAggregates({ model: m, gpu }, [sums]).stepSeconds).toBeCloseTo(exact, 6)
  })

  it("a 200K decode reads 2048 keys of KV and 200K index keys", () => {
    const r = stepTime({ model: models["glm-5.3-dsa"]!, gpu }, [{ decode: [204800], extend: [] }])
    expect(r.ranks[0]!.kvBytesRead).toBe(2048 * 576 * 78)
    expect(r.ranks[0]!.attentionPairs).toBe(204800)
  })

  it("running sums without kvReadPairs cap the attended pairs at tokens x topK", () => {
    const m = models["glm-5.3-dsa"]!
    const batch = { decode: [100_000, 50_000, 1000], extend: [] }
    const a = aggregate(batch, 2048)
    const { kvReadPairs: _drop, ...sums } = a
    const exact = stepTimeFromAggregates({ model: m, gpu }, [a]).stepSeconds
    const estimated = stepTimeFromAggregates({ model: m, gpu }, [sums]).stepSeconds
    expect(a.kvReadPairs).toBe(2048 + 2048 + 1000)
    // the estimate (3 x 2048) is an upper bound of the exact count
    expect(estimated).toBeGreaterThanOrEqual(exact)
    expect(estimated / exact).toBeLessThan(1.05)
  })

  it("a JSON spec asking for dsa without sparseTopK or indexer is rejected, naming the field", () => {
    const { indexer: _i, ...noIndexer } = models["glm-5.3-dsa"]!.attention
    const a = modelFromJson({ ...models["glm-5.3-dsa"], attention: noIndexer })
    expect(Result.isFailure(a) && a.failure.path).toBe("attention.indexer")
    const { sparseTopK: _k, ...noTopK } = models["glm-5.3-dsa"]!.attention
    const b = modelFromJson({ ...models["glm-5.3-dsa"], attention: noTopK })
    expect(Result.isFailure(b) && b.failure.path).toBe("attention.sparseTopK")
    const ok = modelFromJson(JSON.parse(JSON.stringify(models["glm-5.3-dsa"])))
    expect(Result.isSuccess(ok) && ok.success.attention.arithmetic).toBe("dsa")
  })
})
