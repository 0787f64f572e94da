/**
 * The field's routers that break the fairness laws (no systematic tie winner, no starvation under
 * affinity, KV feasibility) on purpose: upstream behaviour, reproduced, with a counterexample each.
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/policies"
import type { AffinityBurst, KvCase, TieRounds } from "./FairnessLaws.js"
import type { LawException } from "./LawExceptions.js"

/**
 * The peer rows of the fairness laws (see `lawExceptions`, which includes them).
 *
 * @example
 * ```ts
 * import { peerFairnessExceptions } from "@loadledger/testing"
 * peerFairnessExceptions.some((x) => x.policy === "dynamo/kv" && x.law === "kvFeasibility") // => true
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const peerFairnessExceptions: ReadonlyArray<LawException> = [
  {
    policy: "llm-d/profile",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/profile",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/profile",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/profile-load-aware",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/profile-load-aware",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/queue-scorer",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/queue-scorer",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/queue-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/kv-cache-utilization-scorer",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/kv-cache-utilization-scorer",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/running-requests-size-scorer",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/running-requests-size-scorer",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/running-requests-size-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/load-aware-scorer",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/load-aware-scorer",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/load-aware-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/active-request-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/token-load-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/prefix-cache-scorer",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/prefix-cache-scorer",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/prefix-cache-scorer",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/weighted-random-picker",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/weighted-random-picker",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/weighted-random-picker",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "llm-d/utilization-detector",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (llm-d upstream)",
    counterexample: [tieRounds(1)]
  },
  {
    policy: "llm-d/utilization-detector",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (llm-d upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "llm-d/utilization-detector",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (llm-d upstream)",
    counterexample: [saturatedFits()]
  },
  {
    policy: "dynamo/kv",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (Dynamo upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "dynamo/kv-t0.5",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (Dynamo upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "dynamo/kv-t0.5",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (Dynamo upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "dynamo/kv-t0.5",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (Dynamo upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "dynamo/vllm-style",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (Dynamo upstream)",
    counterexample: [fullIdle()]
  },
  {
    policy: "aibrix/least-request",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/throughput",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/throughput",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/throughput",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/least-kv-cache",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/least-kv-cache",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/least-kv-cache",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/least-gpu-cache",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/least-gpu-cache",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/least-busy-time",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/least-busy-time",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/least-busy-time",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/least-latency",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/least-latency",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/least-latency",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/random",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(2)]
  },
  {
    policy: "aibrix/random",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/random",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/prefix-cache",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/prefix-cache",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/power-of-two",
    law: "noSystematicTieWinner",
    reason:
      "ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (AIBrix upstream)",
    counterexample: [tieRounds(4)]
  },
  {
    policy: "aibrix/power-of-two",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/power-of-two",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [idleFull()]
  },
  {
    policy: "aibrix/multi",
    law: "noStarvationUnderAffinity",
    reason:
      "scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (AIBrix upstream)",
    counterexample: [affinityBurst(4, 1)]
  },
  {
    policy: "aibrix/multi",
    law: "kvFeasibility",
    reason: "reads no free-KV tokens: a rank that cannot hold the prompt can still win (AIBrix upstream)",
    counterexample: [fullIdle()]
  }
]

/** Four idle ranks, 6 rounds of `perRound` 10-token requests. */
function tieRounds(perRound: number): TieRounds {
  const load = { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
  return { dpSize: 4, load, rounds: 6, perRound, inputLength: 10 }
}

function affinityBurst(dpSize: number, groups: number): AffinityBurst {
  return { dpSize, streams: dpSize, groups, prefixBlocks: 4, numTotalTokens: 0, inputLength: 1000 }
}

/** A rank with `free` of 20000 KV tokens free and `running` requests. */
function kvRow(dpRank: number, free: number, running: number): RankLoad {
  const used = 20_000 - free
  return {
    dpRank,
    timestamp: 10,
    numRunningReqs: running,
    numWaitingReqs: running === 0 ? 0 : 2,
    numTotalTokens: used,
    numUsedTokens: used,
    kvCacheUsage: used / 20_000,
    kvAvailableTokens: free,
    maxTotalNumTokens: 20_000
  }
}

/** Rank 0 idle with a full KV pool, rank 1 busy with all of it free; a 1000-token prompt. */
function fullIdle(): KvCase {
  return { loads: [kvRow(0, 0, 0), kvRow(1, 20_000, 10)], inputLength: 1000 }
}
/** The same, ranks swapped. */
function idleFull(): KvCase {
  return { loads: [kvRow(0, 20_000, 10), kvRow(1, 0, 0)], inputLength: 1000 }
}
/** Eight idle ranks, only rank `fit` with free KV. */
function onlyOneFits(fit: number): KvCase {
  return {
    loads: Array.from({ length: 8 }, (_, r) => kvRow(r, r === fit ? 20_000 : 0, 0)),
    inputLength: 1000
  }
}
/** Seven idle ranks: five full, two near the 0.8 saturation line; only rank 6 holds the prompt. */
function saturatedFits(): KvCase {
  const free = [4001, 0, 0, 0, 0, 0, 4002]
  return { loads: free.map((f, r) => kvRow(r, f, 0)), inputLength: 4002 }
}
