/**
 * What skew costs under lockstep DP attention: the exact numbers of issue 5.
 *
 * Run: `pnpm exec tsx --conditions=@loadledger/source examples/step-time-skew.ts`
 *
 * @since 0.1.0
 */
import { fileURLToPath } from "node:url"
import { gpus, lockstepSyncWait, models, type RankBatch, stepTime } from "@loadledger/step-time"

/** The report lines (also checked by `examples/step-time-skew.test.ts`). @since 0.1.0 */
export const report = (): Array<string> => {
  // the seed's worked example uses dense MLA arithmetic: glm-5.3-dense (glm-5.3 itself runs DSA)
  const config = { model: models["glm-5.3-dense"]!, gpu: gpus["h200"]! }
  const layers = config.model.numLayers
  const fourBy8k: RankBatch = { decode: [8192, 8192, 8192, 8192], extend: [] }
  const lines: Array<string> = []

  // rank 0: three 8K decodes and one 200K; every other rank: four 8K decodes
  const skewed = stepTime(config, [
    { decode: [8192, 8192, 8192, 204800], extend: [] },
    ...Array.from({ length: 7 }, () => fourBy8k)
  ])
  const r0 = skewed.ranks[0]!
  const r1 = skewed.ranks[1]!
  const fmt = (n: number) => n.toLocaleString("en-US")
  lines.push(
    `attention pairs: rank 0 ${fmt(r0.attentionPairs)}, other ranks ${fmt(r1.attentionPairs)} (${(r0.attentionPairs / r1.attentionPairs).toFixed(1)}:1)`,
    `KV read per step: ${fmt(r0.attentionPairs)} x 576 x ${layers} = ${(r0.kvBytesRead / 1e9).toFixed(2)} GB versus ${(r1.kvBytesRead / 1e9).toFixed(2)} GB`,
    `imbalance pairs: ${fmt(r1.imbalancePairs)} per other rank per layer, ${(r1.imbalancePairsPerStep / 1e6).toFixed(1)} million over ${layers} layers`
  )

  // the amplification: 6 ms on one rank, 1 ms on seven, every layer
  const w = lockstepSyncWait([0.006, ...Array<number>(7).fill(0.001)], layers)
  lines.push(
    `sync wait: 6 ms vs 1 ms local -> each of the seven waits ${(w.syncWaitSecondsPerLayer[1]! * 1e3).toFixed(0)} ms per layer, ` +
      `${(w.syncWaitSeconds[1]! * 1e3).toFixed(0)} ms per step over ${layers} layers`
  )

  // glm-5.3-dense + h200 at batch 32 (4 x 8K per rank, 8 ranks) against the published ~30 ms / ~19 ms
  const balanced = stepTime(
    config,
    Array.from({ length: 8 }, () => fourBy8k)
  )
  lines.push(
    `glm-5.3-dense + h200, batch 32: step ${(balanced.stepSeconds * 1e3).toFixed(1)} ms (published ~30), ` +
      `MoE ${(balanced.moeSeconds * 1e3).toFixed(1)} ms (published ~19)`,
    `the 200K request's step: ${(skewed.stepSeconds * 1e3).toFixed(1)} ms; ranks 1-7 wait ${(r1.syncWaitSeconds * 1e3).toFixed(2)} ms each`
  )
  return lines
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(`${report().join("\n")}\n`)
