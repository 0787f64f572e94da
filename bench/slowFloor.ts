/**
 * `pnpm exec tsx --conditions=@loadledger/source bench/slowFloor.ts [--speed 0.7]` (issue 33 item 3):
 * the part of a lockstep step no placement moves once one rank is slow. On `@loadledger/step-time`'s
 * glm-5.3 / H200 model, DP 8, each decode batch (requests per rank x context tokens) is priced three
 * ways: every rank decoding it (the nominal step), rank 0 idle while the others decode it (rank 0's
 * own time then is the fixed part: weights, MoE of the others' tokens, collectives), and the slow
 * rank's floor at `--speed` (that fixed part over the speed: the step cannot be shorter whatever the
 * slow rank holds), against the step with the slow rank decoding its full share (its whole time over
 * the speed, as `applyRankFaults` charges it). Prints one line a batch; runs in a second.
 *
 * @since 0.8.0
 */
import { gpus, models, stepTimeFromAggregates } from "@loadledger/step-time"
import { benchArgs } from "./args.js"

const { num } = benchArgs()
const speed = num("speed", 0.7, 0.7)
const config = { model: models["glm-5.3"]!, gpu: gpus["h200"]! }
const decode = (requests: number, context: number) => ({
  attentionPairs: requests * context,
  tokens: requests,
  numDecodes: requests,
  extendTokens: 0,
  numExtends: 0
})
const idle = { attentionPairs: 0, tokens: 0, numDecodes: 0, extendTokens: 0, numExtends: 0 }
const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`

console.log(
  `DP 8 glm-5.3 on H200, one rank at ${speed}: per decode batch, the nominal step, the fixed part (an idle rank's own time), ` +
    "the slow rank's floor (fixed / speed), the step with the slow rank holding its share, and the floor over the nominal step"
)
console.log(
  "requests x context | nominal step | fixed part | slow floor | slow, full share | floor / nominal"
)
for (const [requests, context] of [
  [1, 2000],
  [8, 2000],
  [16, 4000],
  [32, 4000],
  [64, 8000],
  [128, 8000]
] as const) {
  const all = stepTimeFromAggregates(
    config,
    Array.from({ length: 8 }, () => decode(requests, context))
  )
  const oneIdle = stepTimeFromAggregates(config, [
    idle,
    ...Array.from({ length: 7 }, () => decode(requests, context))
  ])
  const waits = oneIdle.ranks.map((r) => r.syncWaitSeconds ?? 0)
  const fixed = oneIdle.stepSeconds - (waits[0] ?? 0)
  const floor = fixed / speed
  const full = all.stepSeconds / speed
  console.log(
    `${requests} x ${context} | ${ms(all.stepSeconds)} | ${ms(fixed)} | ${ms(floor)} | ${ms(full)} | ${((floor / all.stepSeconds) * 100).toFixed(0)}%`
  )
}
