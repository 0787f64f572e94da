import { Result } from "effect"
import { leaveOneModelOut, fit, identifiability } from "@loadledger/step-time"
import { sharedSamples } from "./packages/step-time/test/sharedData.js"
const t0 = Date.now()
const s = sharedSamples()
console.log("rows", s.length, (Date.now() - t0) / 1000)
const counts: Record<string, number> = {}
for (const x of s) { const k = `${"model" in x ? x.model.name : x.kind} ${x.gpu.name}`; counts[k] = (counts[k] ?? 0) + 1 }
console.log(counts)
const r = Result.getOrThrow(leaveOneModelOut(s))
for (const m of r) {
  const e = m.errors
  const ph = (p: string) => e.byPhase[`${m.model}/${p}`]
  console.log(m.model.padEnd(16), "overall", e.overall.mape.toFixed(1), "decode", ph("decode")?.mape.toFixed(1), "prefill", ph("prefill")?.mape.toFixed(1), "bias", e.overall.bias.toFixed(1))
  for (const [g, c] of Object.entries(m.byGpu)) console.log("   ", g, c.rows, c.mape.toFixed(1), c.bias.toFixed(1), c.priorOnly, JSON.stringify(Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k.slice(0, 8), +v.toPrecision(3)]))))
}
console.log("time", (Date.now() - t0) / 1000)
