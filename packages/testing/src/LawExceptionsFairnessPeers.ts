/**
 * The field's routers that break the fairness laws (no systematic tie winner, no starvation under
 * affinity, KV feasibility) on purpose: upstream behaviour, reproduced, with a counterexample each.
 *
 * @since 0.2.0
 */

import { affinityBurst, fullIdle, idleFull, saturatedFits, tieRounds } from "./internal/lawCases.js"
import type { AffinityBurst, KvCase, LawException, TieRounds } from "./LawTypes.js"

const systems: Readonly<Record<string, string>> = { "llm-d": "llm-d", dynamo: "Dynamo", aibrix: "AIBrix" }
const upstream = (policy: string) => `${systems[policy.split("/")[0]!] ?? policy} upstream`

const ties: ReadonlyArray<readonly [string, TieRounds]> = [
  ["llm-d/profile", tieRounds(1)],
  ["llm-d/queue-scorer", tieRounds(1)],
  ["llm-d/kv-cache-utilization-scorer", tieRounds(1)],
  ["llm-d/running-requests-size-scorer", tieRounds(1)],
  ["llm-d/load-aware-scorer", tieRounds(1)],
  ["llm-d/prefix-cache-scorer", tieRounds(1)],
  ["llm-d/weighted-random-picker", tieRounds(1)],
  ["llm-d/utilization-detector", tieRounds(1)],
  ["dynamo/kv-t0.5", tieRounds(2)],
  ["aibrix/throughput", tieRounds(2)],
  ["aibrix/least-kv-cache", tieRounds(2)],
  ["aibrix/least-gpu-cache", tieRounds(2)],
  ["aibrix/least-busy-time", tieRounds(2)],
  ["aibrix/least-latency", tieRounds(2)],
  ["aibrix/random", tieRounds(2)],
  ["aibrix/power-of-two", tieRounds(4)],
  ["aibrix/least-utilization", tieRounds(2)],
  ["aibrix/slo-pack-load", tieRounds(2)]
]
const starvation: ReadonlyArray<readonly [string, AffinityBurst]> = [
  ["llm-d/profile", affinityBurst(4, 1)],
  ["llm-d/profile-load-aware", affinityBurst(4, 1)],
  ["llm-d/queue-scorer", affinityBurst(4, 1)],
  ["llm-d/kv-cache-utilization-scorer", affinityBurst(4, 1)],
  ["llm-d/running-requests-size-scorer", affinityBurst(4, 1)],
  ["llm-d/load-aware-scorer", affinityBurst(4, 1)],
  ["llm-d/prefix-cache-scorer", affinityBurst(4, 1)],
  ["llm-d/weighted-random-picker", affinityBurst(4, 1)],
  ["llm-d/utilization-detector", affinityBurst(4, 1)],
  ["dynamo/kv-t0.5", affinityBurst(4, 1)],
  ["aibrix/throughput", affinityBurst(4, 1)],
  ["aibrix/least-kv-cache", affinityBurst(4, 1)],
  ["aibrix/least-gpu-cache", affinityBurst(4, 1)],
  ["aibrix/least-busy-time", affinityBurst(4, 1)],
  ["aibrix/least-latency", affinityBurst(4, 1)],
  ["aibrix/random", affinityBurst(4, 1)],
  ["aibrix/prefix-cache", affinityBurst(4, 1)],
  ["aibrix/power-of-two", affinityBurst(4, 1)],
  ["aibrix/multi", affinityBurst(4, 1)],
  ["aibrix/least-utilization", affinityBurst(4, 1)],
  ["aibrix/slo-pack-load", affinityBurst(4, 1)]
]
const kv: ReadonlyArray<readonly [string, KvCase]> = [
  ["llm-d/profile", fullIdle()],
  ["llm-d/profile-load-aware", fullIdle()],
  ["llm-d/queue-scorer", fullIdle()],
  ["llm-d/running-requests-size-scorer", fullIdle()],
  ["llm-d/load-aware-scorer", fullIdle()],
  ["llm-d/active-request-scorer", fullIdle()],
  ["llm-d/token-load-scorer", fullIdle()],
  ["llm-d/prefix-cache-scorer", fullIdle()],
  ["llm-d/weighted-random-picker", fullIdle()],
  ["llm-d/utilization-detector", saturatedFits()],
  ["dynamo/kv", fullIdle()],
  ["dynamo/kv-t0.5", idleFull()],
  ["dynamo/vllm-style", fullIdle()],
  ["aibrix/least-request", idleFull()],
  ["aibrix/throughput", idleFull()],
  ["aibrix/least-kv-cache", idleFull()],
  ["aibrix/least-busy-time", idleFull()],
  ["aibrix/least-latency", idleFull()],
  ["aibrix/random", idleFull()],
  ["aibrix/prefix-cache", idleFull()],
  ["aibrix/power-of-two", idleFull()],
  ["aibrix/multi", fullIdle()],
  ["aibrix/load-balance", idleFull()],
  ["aibrix/least-utilization", idleFull()],
  ["aibrix/slo", idleFull()],
  ["aibrix/slo-least-load-pulling", idleFull()],
  ["aibrix/slo-least-load", idleFull()],
  ["aibrix/slo-pack-load", fullIdle()]
]

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
  ...ties.map(
    ([policy, c]): LawException => ({
      policy,
      law: "noSystematicTieWinner",
      reason: `ties go to a draw or to scan position each round, with no rotation: counts drift apart by more than one (${upstream(policy)})`,
      counterexample: [c]
    })
  ),
  ...starvation.map(
    ([policy, c]): LawException => ({
      policy,
      law: "noStarvationUnderAffinity",
      reason: `scores scraped metrics or a prefix index with no load bound: concurrent streams of one prompt pile onto one rank while another idles (${upstream(policy)})`,
      counterexample: [c]
    })
  ),
  ...kv.map(
    ([policy, c]): LawException => ({
      policy,
      law: "kvFeasibility",
      reason: `reads no free-KV tokens: a rank that cannot hold the prompt can still win (${upstream(policy)})`,
      counterexample: [c]
    })
  )
]
