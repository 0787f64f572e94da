/**
 * The concrete inputs the law-exception tables use as counterexamples (tie rounds, affinity bursts,
 * KV cases, the peer tables' equal and idle scenarios), shared by the reference and the peer tables.
 */
import type { RankLoad } from "@loadledger/policies"
import type { AffinityBurst, KvCase, PolicyScenario, TieRounds } from "../LawTypes.js"

/** Four idle ranks, 6 rounds of `perRound` 10-token requests. */
export function tieRounds(perRound: number): TieRounds {
  const load = { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
  return { dpSize: 4, load, rounds: 6, perRound, inputLength: 10 }
}

export function affinityBurst(dpSize: number, groups: number): AffinityBurst {
  return { dpSize, streams: dpSize, groups, prefixBlocks: 4, numTotalTokens: 0, inputLength: 1000 }
}

/** A rank with `free` of 20000 KV tokens free and `running` requests. */
export function kvRow(dpRank: number, free: number, running: number): RankLoad {
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
export function fullIdle(): KvCase {
  return { loads: [kvRow(0, 0, 0), kvRow(1, 20_000, 10)], inputLength: 1000 }
}
/** The same, ranks swapped. */
export function idleFull(): KvCase {
  return { loads: [kvRow(0, 20_000, 10), kvRow(1, 0, 0)], inputLength: 1000 }
}
/** Eight idle ranks, only rank `fit` with free KV. */
export function onlyOneFits(fit: number): KvCase {
  return {
    loads: Array.from({ length: 8 }, (_, r) => kvRow(r, r === fit ? 20_000 : 0, 0)),
    inputLength: 1000
  }
}

/** Seven idle ranks: five full, two near the 0.8 saturation line; only rank 6 holds the prompt. */
export function saturatedFits(): KvCase {
  const free = [4001, 0, 0, 0, 0, 0, 4002]
  return { loads: free.map((f, r) => kvRow(r, f, 0)), inputLength: 4002 }
}

/** One peer-table row: 2 running, 1 waiting, 100 tokens, KV 0.5, at 1 s. */
function peerRow(dpRank: number): RankLoad {
  return {
    dpRank,
    timestamp: 1,
    numRunningReqs: 2,
    numWaitingReqs: 1,
    numTotalTokens: 100,
    kvCacheUsage: 0.5
  }
}

/** Peer tables: `n` equal healthy ranks observed at 1 s, then `k` requests 0.1 ms apart (session s1, blocks 1, 2 when `shared`). */
export function peerScenario(n: number, k: number, shared: boolean): PolicyScenario {
  return {
    dpSize: n,
    status: Array.from({ length: n }, () => true),
    loads: Array.from({ length: n }, (_, r) => peerRow(r)),
    requests: Array.from({ length: k }, (_, i) => ({
      requestId: `q${i}`,
      inputLength: 100,
      ...(shared ? { sessionId: "s1", prefixHashes: ["1", "2"] } : {})
    })),
    startSeconds: 1,
    gapsSeconds: [0, ...Array.from({ length: k }, () => 0.0001)]
  }
}

/** Idle ranks with health `status` observed at 1 s (rank `full` also reporting KV 0 and 0 waiting uncached tokens), one request at `start + gap`. */
export function idleScenario(
  status: ReadonlyArray<boolean>,
  full: number | undefined,
  startSeconds: number,
  gapSeconds: number
): PolicyScenario {
  return {
    dpSize: status.length,
    status,
    loads: status.map((_, dpRank) => ({
      dpRank,
      timestamp: 1,
      numRunningReqs: 0,
      numWaitingReqs: 0,
      numTotalTokens: 0,
      ...(dpRank === full ? { kvCacheUsage: 0, numWaitingUncachedTokens: 0 } : {})
    })),
    requests: [{ requestId: "q0", inputLength: 1 }],
    startSeconds,
    gapsSeconds: [gapSeconds]
  }
}
