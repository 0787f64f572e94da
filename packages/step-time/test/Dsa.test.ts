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
  it("the glm-5.3 preset says it uses dense arithmetic, glm-5.3-dsa says dsa", () => {
    expect(models["glm-5.3"]!.attention.arithmetic).toBe("dense")
    expect(models["glm-5.3"]!.attention.sparseTopK).toBeUndefined()
    const a = models["glm-5.3-dsa"]!.attention
    expect(a.arithmetic).toBe("dsa")
    expect(a.sparseTopK).toBe(2048)
    expect(a.indexer).toEqual({ heads: 32, headDim: 128, bytesPerElement: 1, keyBytesPerTokenPerLayer: 132 })
  })

  it("below index_topk keys DSA costs what dense costs plus the indexer (within 3%)", () => {
    const dense = chunk("glm-5.3", 0, 2048)
    const dsa = chunk("glm-5.3-dsa", 0, 2048)
    expect(dsa).toBeGreaterThanOrEqual(dense)
    expect(dsa / dense).toBeLessThan(1.03)
  })

  it("anchor: long inputs prefill 2-3x faster than dense (16K-64K), faster at every length above 7K", () => {
    const ratio = (n: number) => prefill("glm-5.3", n) / prefill("glm-5.3-dsa", n)
    const rs = [7168, 8192, 16384, 32768, 65536, 131072].map(ratio)
    for (const r of rs) expect(r).toBeGreaterThan(1.2)
    for (let i = 1; i < rs.length; i++) expect(rs[i]!).toBeGreaterThan(rs[i - 1]!)
    for (const n of [16384, 32768, 65536]) {
      expect(ratio(n)).toBeGreaterThanOrEqual(1.95)
      expect(ratio(n)).toBeLessThanOrEqual(3)
    }
  })

  it("anchor: an 8K chunk's cost grows linearly with its prefix, at under 1/3 of dense's slope", () => {
    const prefixes = [32768, 65536, 98304, 131072]
    const dsa = prefixes.map((p) => chunk("glm-5.3-dsa", p, 8192))
    const dense = prefixes.map((p) => chunk("glm-5.3", p, 8192))
    const d1 = dsa.slice(1).map((v, i) => v - dsa[i]!)
    // equal steps of prefix -> equal steps of cost (no quadratic term)
    for (const d of d1) expect(Math.abs(d - d1[0]!) / d1[0]!).toBeLessThan(0.02)
    expect(d1[0]! / (dense[1]! - dense[0]!)).toBeLessThan(1 / 3)
  })

  it("an 8K chunk after a 120K prefix: 11.0 s dense, 3.4 s with DSA", () => {
    expect(chunk("glm-5.3", 122880, 8192)).toBeCloseTo(11.05, 1)
    expect(chunk("glm-5.3-dsa", 122880, 8192)).toBeCloseTo(3.38, 1)
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
