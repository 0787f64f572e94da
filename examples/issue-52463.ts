/**
 * vLLM issue #52463, reproduced in the simulator: the rotating tie-break of #47420 against the
 * fixed scan start before it and the prefix-affinity tie-break proposed in #52464, on the
 * issue's deployment (DP 4 with EP on 8 H100, four API servers, block size 256) and a
 * Mooncake-style multi-turn replay built for ~82% prefix reuse.
 *
 *     pnpm exec tsx --conditions=@loadledger/source examples/issue-52463.ts [--sessions 8,16,32] [--turns 10]
 *
 * The replay (`multiTurnTrace`): `sessions` conversations of `turns` turns; turn k's prompt is
 * k x 6,144 tokens (12 Mooncake blocks of 512 per turn: the first k x 12 hash ids of its session),
 * so turn k reuses turn k-1's whole prompt and the designed reuse is (T-1)/(T+1) = 81.8% for
 * T = 10 (the issue: 81.7%), the mean prompt 33,792 tokens (the issue: ~34k). Arrivals take the
 * sessions in turn, one every `gapSeconds` (seeded jitter below a third of a gap keeps the order),
 * so request i is session i mod S and, as the simulator sends request i to front end i mod 4, a
 * session keeps its API server (aiperf keeps one connection per session).
 *
 * @since 0.7.0
 */
import { findPolicy } from "@loadledger/policies"
import { modelSimConfig, simulate, type TraceRequest } from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time"

/** A mulberry32 stream: the seed is an argument, no `Math.random`. */
const rng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The replay: see the module header. `blocksPerTurn` Mooncake blocks of 512 tokens per turn. */
export const multiTurnTrace = (o: {
  readonly sessions: number
  readonly turns: number
  readonly gapSeconds: number
  readonly seed: number
  readonly blocksPerTurn?: number
  readonly outputLength?: number
}): Array<TraceRequest> => {
  const draw = rng(o.seed)
  const per = o.blocksPerTurn ?? 12
  const out: Array<TraceRequest> = []
  for (let i = 0; i < o.sessions * o.turns; i++) {
    const s = i % o.sessions
    const k = Math.floor(i / o.sessions) + 1
    const hashIds = Array.from({ length: k * per }, (_, j) => s * 100_000 + j)
    out.push({
      requestId: `s${s}-t${k}`,
      arrivalSeconds: i * o.gapSeconds + draw() * (o.gapSeconds / 3),
      inputLength: k * per * 512,
      outputLength: o.outputLength ?? 200,
      hashIds,
      sessionId: `s${s}`
    })
  }
  return out
}

/** The tie-breaks compared, by registry name. */
export const TIE_BREAKS = [
  ["fixed start (before #47420)", "vllm-kv-pressure-fixed-start"],
  ["rotating (#47420)", "vllm-kv-pressure"],
  ["prefix affinity (#52464)", "vllm-prefix-affinity"]
] as const

/** Prefix-cache hit rate of each tie-break on one replay, as fractions. */
export const hitRates = (trace: ReadonlyArray<TraceRequest>): Array<number> => {
  const config = {
    dpSize: 4,
    engine: "vllm" as const,
    frontEnds: 4,
    lockstep: true,
    expertParallel: true,
    ...modelSimConfig(models["deepseek-v3"]!, gpus["h100-80gb"]!),
    // a DP rank of the issue's deployment (2 H100, fp8 KV, max-model-len 1M) holds about a
    // million tokens; the preset's pool is not the V4-Flash one
    kvPoolTokens: 1_000_000,
    maxRequestTokens: 1_000_000
  }
  return TIE_BREAKS.map(([, name]) => {
    const r = simulate(config, trace, findPolicy(name)!)
    return r.prefixCacheHitRate
  })
}

const main = (): void => {
  const arg = (flag: string, d: string): string => {
    const i = process.argv.indexOf(flag)
    return i < 0 ? d : process.argv[i + 1]!
  }
  const sessions = arg("--sessions", "4,8,12,16").split(",").map(Number)
  const turns = Number(arg("--turns", "10"))
  console.log(`| sessions | ${TIE_BREAKS.map(([label]) => label).join(" | ")} |`)
  console.log(`| --- | ${TIE_BREAKS.map(() => "---").join(" | ")} |`)
  for (const s of sessions) {
    const rates = hitRates(
      multiTurnTrace({ sessions: s, turns, gapSeconds: Number(arg("--gap", "20")), seed: 52463 })
    )
    console.log(`| ${s} | ${rates.map((x) => `${(x * 100).toFixed(1)}%`).join(" | ")} |`)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main()
