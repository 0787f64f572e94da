/**
 * The shape-aware step-time model as a function of one row's parameter vector theta (see
 * `ShapeAware.ts` for what each parameter means). Every term is one theta_i times a physical
 * quantity, combined with `max` / `min` / `+` only, so the model is piecewise linear and
 * homogeneous in theta (f(c theta) = c f(theta)): the fit's linearised solve is exact on each piece.
 * The first `SG` entries belong to the GPU, the last `SS` to the (stack, GPU) that measured the row.
 */
import { aggregate, type RankAggregate } from "../Batch.js"
import type { CalibrationSample } from "../Calibration.js"
import type { GpuSpec } from "../Hardware.js"
import type { ModelSpec } from "../Model.js"

export const shapeParameterNames = [
  "memoryEfficiency",
  "computeEfficiency",
  "linkEfficiency",
  "collectiveLatencySeconds",
  "ridgeOverlap",
  "gemmRowSeconds",
  "elementwiseEfficiency",
  "attentionEfficiency",
  "perLayerOverheadSeconds",
  "perRequestSecondsPerLayer",
  "fixedOverheadSeconds",
  "launchSecondsPerLayer",
  "perRequestOverheadSeconds",
  "perChunkOverheadSeconds"
] as const
export type ShapeParameterName = (typeof shapeParameterNames)[number]
/** GPU-level parameters: theta[0..SG). */
export const SG = 8
/** (stack, GPU)-level parameters: theta[SG..SP). */
export const SP = shapeParameterNames.length
export const SS = SP - SG
/** Parameters held as 1 / efficiency in theta. */
export const isInverse = (i: number): boolean => i === 0 || i === 1 || i === 2 || i === 6 || i === 7

/** Per-row quantities that do not depend on theta. */
export interface ShapeRow {
  readonly s: CalibrationSample
  readonly aggs: ReadonlyArray<RankAggregate>
  readonly y: number
  /** The row's step runs without a CUDA graph (pays the per-layer launch floor). */
  readonly eager: boolean
}

export const shapeRow = (s: CalibrationSample, eagerDecode: boolean): ShapeRow => {
  const aggs =
    s.kind === undefined || s.kind === "step" || s.kind === "attention"
      ? s.ranks.map((b) => aggregate(b, s.model.attention.sparseTopK))
      : []
  const anyExtend = aggs.some((a) => a.extendTokens > 0)
  return { s, aggs, y: s.measuredSeconds, eager: anyExtend || eagerDecode }
}

/** A row of a fit: its prepared quantities; a step row with `cudaGraph: false` runs its decode eagerly. */
export const shapeBlockRow = (s: CalibrationSample): ShapeRow =>
  shapeRow(s, (s.kind === undefined || s.kind === "step") && s.cudaGraph === false)

const peakFor = (gpu: GpuSpec, bytes: number) =>
  bytes <= 1 ? (gpu.peakFp8FlopsPerSecond ?? 2 * gpu.peakFlopsPerSecond) : gpu.peakFlopsPerSecond

/**
 * One GEMM block at `tokens` rows: the roofline of its weight bytes against its FLOPs, compute
 * shaped by a per-row-per-GEMM cost (small N x K tiles) and by how close it sits to the ridge
 * (`ridgeOverlap` x the smaller side at datasheet peaks), plus attention pair FLOPs when given.
 */
const gemm = (
  t: ReadonlyArray<number>,
  bw: number,
  peak: number,
  weightBytes: number,
  flops: number,
  rows: number,
  pairFlops = 0,
  memBytes = 0
) => {
  const mem = (weightBytes + memBytes) / bw
  const comp = flops / peak
  const pair = pairFlops / peak
  return (
    Math.max(t[0]! * mem, t[1]! * comp + t[7]! * pair + t[5]! * rows) + t[4]! * Math.min(mem, comp + pair)
  )
}

/** Norms, residual adds, rope and the MLP activation: bytes of activations moved per token per layer. */
export const elementwiseBytesPerToken = (m: ModelSpec): number => {
  const h = m.hiddenSize
  const width =
    m.mlp.kind === "dense" ? m.mlp.paramsPerLayer / (3 * h) : (m.mlp.topK * m.mlp.expertParams) / (3 * h)
  return m.activationBytes * (8 * h + (3 * width) / m.tp)
}

const mlpLayer = (m: ModelSpec, t: ReadonlyArray<number>, bw: number, peak: number, tokens: number) => {
  const bpp = m.weightBytesPerParam
  if (m.mlp.kind === "dense")
    return gemm(
      t,
      bw,
      peak,
      (m.mlp.paramsPerLayer * bpp) / m.tp,
      (2 * tokens * m.mlp.paramsPerLayer) / m.tp,
      2 * tokens
    )
  const e = m.mlp
  const distinct = (e.numExperts / e.ep) * (1 - (1 - e.topK / e.numExperts) ** tokens)
  return gemm(
    t,
    bw,
    peak,
    (distinct * e.expertParams + e.sharedExpertParams) * bpp,
    (2 * tokens * (e.topK * e.expertParams + e.sharedExpertParams)) / e.ep,
    (2 * tokens * (e.topK + (e.sharedExpertParams > 0 ? 1 : 0))) / e.ep
  )
}

/** The modelled seconds of a shape row under theta. */
export const evalShape = (r: ShapeRow, t: ReadonlyArray<number>): number => {
  const s = r.s
  const gpu = s.gpu
  const bw = gpu.hbmBandwidthBytesPerSecond
  const link = gpu.linkBandwidthBytesPerSecond
  switch (s.kind) {
    case "all-reduce": {
      const g = s.gpus
      return (g - 1) * t[3]! + (t[2]! * (2 * (g - 1) * s.bytes)) / g / link
    }
    case "send-recv":
      return t[3]! + (t[2]! * s.bytes) / link
    case "layer": {
      const m = s.model
      const peak = peakFor(gpu, m.weightBytesPerParam)
      const a = m.attention.paramsPerLayer
      const attn = gemm(
        t,
        bw,
        peak,
        (a * m.weightBytesPerParam) / m.tp,
        (2 * s.tokens * a) / m.tp,
        2 * s.tokens
      )
      return (
        attn +
        mlpLayer(m, t, bw, peak, s.tokens) +
        (t[6]! * s.tokens * elementwiseBytesPerToken(m)) / bw +
        t[8]!
      )
    }
    case "attention": {
      const m = s.model
      const att = m.attention
      const kvShards = att.kind === "mla" ? 1 : Math.min(m.tp, att.kvHeads ?? att.numHeads)
      let sum = 0
      for (const a of r.aggs) {
        const kv = ((a.kvReadPairs ?? a.attentionPairs) * att.kvBytesPerTokenPerLayer) / kvShards
        const numReq = a.numDecodes + (a.numExtends ?? (a.extendTokens > 0 ? 1 : 0))
        sum +=
          gemm(t, bw, gpu.peakFlopsPerSecond, 0, 0, 0, (a.attentionPairs * att.flopsPerPair) / m.tp, kv) +
          numReq * t[9]!
      }
      return sum
    }
    default:
      return stepSeconds(s.model, gpu, r.aggs, t, r.eager)
  }
}

/** A whole lockstep step (one or more DP ranks) under theta. */
export const stepSeconds = (
  m: ModelSpec,
  gpu: GpuSpec,
  aggs: ReadonlyArray<RankAggregate>,
  t: ReadonlyArray<number>,
  eager: boolean
): number => {
  const bw = gpu.hbmBandwidthBytesPerSecond
  const peak = peakFor(gpu, m.weightBytesPerParam)
  const att = m.attention
  const L = m.numLayers
  const tp = m.tp
  const dp = aggs.length
  const kvShards = att.kind === "mla" ? 1 : Math.min(tp, att.kvHeads ?? att.numHeads)
  const attnW = (att.paramsPerLayer * m.weightBytesPerParam) / tp
  let maxLocal = 0
  let sumTokens = 0
  let maxTokens = 0
  let maxReq = 0
  let maxChunks = 0
  let lmHead = 0
  for (const a of aggs) {
    const chunks = a.numExtends ?? (a.extendTokens > 0 ? 1 : 0)
    const numReq = a.numDecodes + chunks
    maxReq = Math.max(maxReq, numReq)
    maxChunks = Math.max(maxChunks, chunks)
    sumTokens += a.tokens
    maxTokens = Math.max(maxTokens, a.tokens)
    let local = t[8]!
    if (a.tokens > 0) {
      const kv = ((a.kvReadPairs ?? a.attentionPairs) * att.kvBytesPerTokenPerLayer) / kvShards
      local +=
        gemm(
          t,
          bw,
          peak,
          attnW,
          (2 * a.tokens * att.paramsPerLayer) / tp,
          2 * a.tokens,
          (a.attentionPairs * att.flopsPerPair) / tp,
          kv
        ) +
        numReq * t[9]! +
        (t[6]! * a.tokens * elementwiseBytesPerToken(m)) / bw
      const lmBytes = (m.vocabSize * m.hiddenSize * m.activationBytes) / tp
      lmHead = Math.max(
        lmHead,
        gemm(t, bw, gpu.peakFlopsPerSecond, lmBytes, (2 * numReq * m.vocabSize * m.hiddenSize) / tp, numReq)
      )
    }
    maxLocal = Math.max(maxLocal, local)
  }
  const g = dp * tp
  const mlp = sumTokens > 0 ? L * mlpLayer(m, t, bw, peak, sumTokens) : 0
  let comm = 0
  if (g > 1) {
    const bytes =
      m.collective === "all-to-all" && m.mlp.kind === "moe"
        ? ((g - 1) * (maxTokens / tp) * m.mlp.topK * m.hiddenSize * m.activationBytes) / g
        : ((dp > 1 ? 1 : 2) * (g - 1) * sumTokens * m.hiddenSize * m.activationBytes) / g
    comm = 2 * ((g - 1) * t[3]! + (t[2]! * bytes) / gpu.linkBandwidthBytesPerSecond)
  }
  const gpuSeconds = L * (maxLocal + comm) + mlp + lmHead
  return (
    (eager ? Math.max(gpuSeconds, L * t[11]!) : gpuSeconds) + t[10]! + maxReq * t[12]! + maxChunks * t[13]!
  )
}

/** d(seconds)/d(theta_i) at theta: exact on each linear piece. */
export const shapeFeatures = (r: ShapeRow, theta: ReadonlyArray<number>): Array<number> => {
  const base = evalShape(r, theta)
  const t2 = [...theta]
  return theta.map((ti, i) => {
    const h = Math.max(Math.abs(ti), 1e-9) * 1e-6
    t2[i] = ti + h
    const d = (evalShape(r, t2) - base) / h
    t2[i] = ti
    return d
  })
}
