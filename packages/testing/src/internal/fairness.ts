/**
 * Runners and generators behind the fairness laws (`FairnessLaws.ts`).
 *
 * @internal
 */
import type { Policy, RankLoad, RouteRequest } from "@loadledger/policies"
import fc from "fast-check"
import type { AffinityBurst, KvCase, TieRounds } from "../LawTypes.js"

/** The time of the first snapshot of every fairness case. @internal */
export const t0 = 10

/** @internal Per-rank counts of the routed requests of a {@link TieRounds} case. */
export const tieRoundCounts = <S>(policy: Policy<S>, c: TieRounds): Array<number> => {
  const counts = new Array<number>(c.dpSize).fill(0)
  let s = policy.init(c.dpSize)
  let k = 0
  for (let round = 0; round < c.rounds; round++) {
    const t = t0 + round
    const rows = Array.from({ length: c.dpSize }, (_, dpRank) => ({ ...c.load, dpRank, timestamp: t }))
    s = policy.observe(s, rows, t)
    for (let i = 0; i < c.perRound; i++) {
      const out = policy.route(
        s,
        { requestId: `tie-${k++}`, inputLength: c.inputLength },
        t + 0.001 * (i + 1)
      )
      if (out._tag === "Routed") {
        counts[out.rank]! += 1
        s = out.state
      }
    }
  }
  return counts
}

/** @internal Per-rank counts of the streams of an {@link AffinityBurst} case. */
export const affinityBurstCounts = <S>(policy: Policy<S>, c: AffinityBurst): Array<number> => {
  const counts = new Array<number>(c.dpSize).fill(0)
  const rows = Array.from(
    { length: c.dpSize },
    (_, dpRank): RankLoad => ({
      dpRank,
      timestamp: t0,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: c.numTotalTokens
    })
  )
  let s = policy.observe(policy.init(c.dpSize), rows, t0)
  for (let i = 0; i < c.streams; i++) {
    const g = i % c.groups
    const request: RouteRequest = {
      requestId: `stream-${i}`,
      inputLength: c.inputLength,
      bootstrapRoom: String(i),
      prefixHashes: Array.from({ length: c.prefixBlocks }, (_, b) => `group-${g}-block-${b}`)
    }
    const out = policy.route(s, request, t0 + 0.0001 * (i + 1))
    if (out._tag === "Routed") {
      counts[out.rank]! += 1
      s = out.state
    }
  }
  return counts
}

const size = fc.integer({ min: 1, max: 8 })

/** Generated {@link TieRounds}: 1..8 ranks, 1..10 rounds of 1..3 requests, any equal snapshot. @internal */
export const tieRoundsArb: fc.Arbitrary<TieRounds> = fc.record({
  dpSize: size,
  load: fc.record({
    dpRank: fc.constant(0),
    numRunningReqs: fc.nat({ max: 64 }),
    numWaitingReqs: fc.nat({ max: 64 }),
    numTotalTokens: fc.nat({ max: 200_000 }),
    kvCacheUsage: fc.integer({ min: 0, max: 80 }).map((p) => p / 100)
  }),
  rounds: fc.integer({ min: 1, max: 10 }),
  perRound: fc.integer({ min: 1, max: 3 }),
  inputLength: fc.integer({ min: 1, max: 8192 })
})

/** Generated {@link AffinityBurst}: 2..8 ranks, dpSize..2 dpSize streams in 1..3 groups. @internal */
export const affinityBurstArb: fc.Arbitrary<AffinityBurst> = fc.integer({ min: 2, max: 8 }).chain((n) =>
  fc.record({
    dpSize: fc.constant(n),
    streams: fc.integer({ min: n, max: 2 * n }),
    groups: fc.integer({ min: 1, max: 3 }),
    prefixBlocks: fc.integer({ min: 1, max: 8 }),
    numTotalTokens: fc.nat({ max: 100_000 }),
    inputLength: fc.integer({ min: 16, max: 8192 })
  })
)

const kvCapacity = 20_000

/** Generated {@link KvCase}: 2..8 ranks, free KV 0..20000 of 20000 tokens, prompt 1..20000. @internal */
export const kvCaseArb: fc.Arbitrary<KvCase> = fc.integer({ min: 2, max: 8 }).chain((n) =>
  fc.record({
    loads: fc.tuple(
      ...Array.from({ length: n }, (_, dpRank) =>
        fc
          .record({
            free: fc.nat({ max: kvCapacity }),
            running: fc.nat({ max: 64 }),
            waiting: fc.nat({ max: 8 })
          })
          .map(
            ({ free, running, waiting }): RankLoad => ({
              dpRank,
              timestamp: t0,
              numRunningReqs: running,
              numWaitingReqs: waiting,
              numTotalTokens: kvCapacity - free,
              numUsedTokens: kvCapacity - free,
              kvCacheUsage: (kvCapacity - free) / kvCapacity,
              kvAvailableTokens: free,
              maxTotalNumTokens: kvCapacity
            })
          )
      )
    ),
    inputLength: fc.integer({ min: 1, max: kvCapacity })
  })
)
