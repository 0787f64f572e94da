/**
 * `pnpm bench step-time`: cost of one modelled step (the simulator calls it 1e5-1e6 times a run).
 *
 * @since 0.1.0
 */
import {
  gpus,
  models,
  type RankAggregate,
  type RankBatch,
  stepTime,
  stepTimeFromAggregates
} from "@loadledger/step-time"
import { type Benchmark, consume, iterationsFor, nsPerOpInterleaved, prng } from "./harness.js"

const run = (): void => {
  const config = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
  const rnd = prng(5)
  const rows: Array<string> = []
  for (const dp of [8, 16, 64]) {
    const batches: Array<RankBatch> = Array.from({ length: dp }, () => ({
      decode: Array.from({ length: 16 }, () => 1 + Math.floor(rnd() * 32_000)),
      extend: rnd() < 0.2 ? [{ prefix: 0, tokens: 2048 }] : []
    }))
    const aggs: Array<RankAggregate> = batches.map((b) => {
      const pairs =
        b.decode.reduce((a, l) => a + l, 0) +
        b.extend.reduce((a, c) => a + c.prefix * c.tokens + (c.tokens * (c.tokens + 1)) / 2, 0)
      const ext = b.extend.reduce((a, c) => a + c.tokens, 0)
      return {
        attentionPairs: pairs,
        tokens: b.decode.length + ext,
        numDecodes: b.decode.length,
        extendTokens: ext
      }
    })
    const [agg, full] = nsPerOpInterleaved([
      {
        step: () => consume(stepTimeFromAggregates(config, aggs).stepSeconds * 1e9),
        iterations: iterationsFor(100 * dp)
      },
      {
        step: () => consume(stepTime(config, batches).stepSeconds * 1e9),
        iterations: iterationsFor(300 * dp)
      }
    ])
    rows.push(`| ${dp} | ${agg!.toFixed(0)} | ${(1e9 / agg!).toExponential(2)} | ${full!.toFixed(0)} |`)
  }
  process.stdout.write(
    "glm-5.3 on h200, 16 decodes per rank (20% of ranks with a 2K extend)\n\n" +
      "| DP ranks | stepTimeFromAggregates ns/step | steps/s | stepTime (from batches) ns/step |\n|---|---|---|---|\n" +
      `${rows.join("\n")}\n`
  )
}

/** The step-time benchmark. @since 0.1.0 */
export const stepTimeBench: Benchmark = { name: "step-time", run }
