/**
 * The step-time model as a function of one row's parameter vector theta, for every calibration
 * sample kind: every term is one theta_i times a physical quantity, so the model is piecewise
 * linear in theta = [1/mem, 1/comp, 1/link, latency, perLayer, perRequest, fixed, eager]. The
 * first `NG` entries belong to the GPU, the last `NS` to the stack that measured the row (see
 * `layout.ts`).
 */
import { aggregate, type RankAggregate } from "../Batch.js"
import type { CalibrationSample } from "../CalibrationTypes.js"
import { defaultEfficiencies, type Efficiencies } from "../Efficiencies.js"
import { stepTimeFromAggregates } from "../StepTime.js"

export const NP = 9
/** Efficiencies (theta = 1 / efficiency): theta[0..NE). */
export const NE = 3
/** GPU-level parameters (efficiencies, collective latency): theta[0..NG). */
export const NG = 4
/** Stack-level parameters (per-layer, per-request, per-step and eager overheads): theta[NG..NP). */
export const NS = NP - NG
export const parameterNames = [
  "memoryEfficiency",
  "computeEfficiency",
  "linkEfficiency",
  "collectiveLatencySeconds",
  "perLayerOverheadSeconds",
  "perRequestSecondsPerLayer",
  "fixedOverheadSeconds",
  "eagerOverheadSecondsPerLayer",
  "perRequestOverheadSeconds"
] as const
export type ParameterName = (typeof parameterNames)[number]
export const stackParameterNames = parameterNames.slice(NG) as ReadonlyArray<ParameterName>

export const lower: ReadonlyArray<number> = [1, 1, 1, 0, 0, 0, 0, 0, 0]
export const toTheta = (p: Partial<Efficiencies>): Array<number> => {
  const q = { ...defaultEfficiencies, ...p }
  return [
    1 / q.memoryEfficiency,
    1 / q.computeEfficiency,
    1 / q.linkEfficiency,
    q.collectiveLatencySeconds,
    q.perLayerOverheadSeconds,
    q.perRequestSecondsPerLayer,
    q.fixedOverheadSeconds,
    q.eagerOverheadSecondsPerLayer,
    q.perRequestOverheadSeconds
  ]
}
export const fromTheta = (t: ReadonlyArray<number>): Efficiencies => ({
  memoryEfficiency: 1 / t[0]!,
  computeEfficiency: 1 / t[1]!,
  linkEfficiency: 1 / t[2]!,
  collectiveLatencySeconds: t[3]!,
  perLayerOverheadSeconds: t[4]!,
  perRequestSecondsPerLayer: t[5]!,
  fixedOverheadSeconds: t[6]!,
  eagerOverheadSecondsPerLayer: t[7]!,
  perRequestOverheadSeconds: t[8]!
})

export interface Prepared {
  readonly s: CalibrationSample
  readonly aggs: ReadonlyArray<RankAggregate>
  readonly y: number
}
export const prepare = (s: CalibrationSample): Prepared => ({
  s,
  aggs:
    s.kind === undefined || s.kind === "step" || s.kind === "attention"
      ? s.ranks.map((b) => aggregate(b, s.model.attention.sparseTopK))
      : [],
  y: s.measuredSeconds
})

const fp8 = (peak16: number, peak8: number | undefined) => peak8 ?? 2 * peak16

/** The modelled seconds of a prepared sample under theta. */
export const evalPrepared = (p: Prepared, theta: ReadonlyArray<number>): number => {
  const s = p.s
  const gpu = s.gpu
  const bw = gpu.hbmBandwidthBytesPerSecond / theta[0]!
  const link = gpu.linkBandwidthBytesPerSecond / theta[2]!
  switch (s.kind) {
    case undefined:
    case "step":
      return stepTimeFromAggregates({ model: s.model, gpu, params: fromTheta(theta) }, p.aggs).stepSeconds
    case "layer": {
      // one layer's GEMMs and small kernels on one GPU of a TP group, no attention kernel
      const m = s.model
      const peak =
        (m.weightBytesPerParam <= 1
          ? fp8(gpu.peakFlopsPerSecond, gpu.peakFp8FlopsPerSecond)
          : gpu.peakFlopsPerSecond) / theta[1]!
      const roof = (params: number) =>
        Math.max((params * m.weightBytesPerParam) / m.tp / bw, (2 * s.tokens * params) / m.tp / peak)
      const mlpParams =
        m.mlp.kind === "dense"
          ? m.mlp.paramsPerLayer
          : m.mlp.topK * m.mlp.expertParams + m.mlp.sharedExpertParams
      return roof(m.attention.paramsPerLayer) + roof(mlpParams) + theta[4]!
    }
    case "attention": {
      // the attention kernel alone: KV reads against pair FLOPs, plus per-request metadata
      const m = s.model
      const att = m.attention
      const kvShards = att.kind === "mla" ? 1 : Math.min(m.tp, att.kvHeads ?? att.numHeads)
      let t = 0
      for (const a of p.aggs) {
        const kv = a.kvReadPairs ?? a.attentionPairs
        const numReq = a.numDecodes + (a.numExtends ?? (a.extendTokens > 0 ? 1 : 0))
        t +=
          Math.max(
            (kv * att.kvBytesPerTokenPerLayer) / kvShards / bw,
            (a.attentionPairs * att.flopsPerPair) / m.tp / (gpu.peakFlopsPerSecond / theta[1]!)
          ) +
          numReq * theta[5]!
      }
      return t
    }
    case "all-reduce": {
      const g = s.gpus
      return (g - 1) * theta[3]! + (2 * (g - 1) * s.bytes) / g / link
    }
    case "send-recv":
      return theta[3]! + s.bytes / link
  }
}

/** d(seconds)/d(theta_i) at theta: exact on each linear piece of the roofline. */
export const features = (p: Prepared, theta: ReadonlyArray<number>): Array<number> => {
  const base = evalPrepared(p, theta)
  return theta.map((ti, i) => {
    const h = Math.max(Math.abs(ti), 1e-9) * 1e-6
    const t2 = [...theta]
    t2[i] = ti + h
    return (evalPrepared(p, t2) - base) / h
  })
}
