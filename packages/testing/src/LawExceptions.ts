/**
 * The one table of policies that break a policy law on purpose.
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/policies"
import { affinityBurst, fullIdle, idleFull, onlyOneFits, tieRounds } from "./internal/lawCases.js"
import { peerFairnessExceptions } from "./LawExceptionsFairnessPeers.js"
import { peerLawExceptions } from "./LawExceptionsPeers.js"
import { trtllmLawExceptions } from "./LawExceptionsTrtllm.js"
import { vllmLawExceptions } from "./LawExceptionsVllm.js"
import type { LawException, PolicyScenario } from "./LawTypes.js"

/**
 * Every exception to the registry laws (see `registryLawCases`).
 *
 * **When to use**: read it to see which registered policy breaks which law and why; add a row (with
 * a counterexample) when a new policy breaks a law on purpose.
 *
 * @example
 * ```ts
 * import { lawExceptions } from "@loadledger/testing"
 * lawExceptions.some((x) => x.policy === "round-robin" && x.law === "permutationEquivariant") // => true
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const lawExceptions: ReadonlyArray<LawException> = [
  ...(
    [
      ["round-robin", "the round-robin counter starts at rank 0 (SGLang upstream)"],
      ["follow-bootstrap-room", "the bootstrap room names the rank whatever the labels (SGLang upstream)"],
      ["total-requests", "ties go to the lowest index (SGLang upstream)"],
      ["total-tokens", "ties go to the lowest index (SGLang upstream)"],
      ["vllm-kv-pressure", "ties go to the rotating start index, 0 for one front end (vLLM upstream)"],
      ["vllm-kv-pressure-kv-guard", "ties go to the rotating start index (vLLM upstream)"],
      [
        "vllm-prefix-affinity",
        "ties go to the rotating start index when no prefix is remembered (vLLM #52464)"
      ],
      [
        "vllm-kv-pressure-fixed-start",
        "ties go to the fixed start index, 0 for one front end (vLLM before #47420)"
      ],
      ["ledger-balanced", "ties go to the lowest index from the replica's start offset"],
      ["ledger-balanced-requests", "ties go to the lowest index from the replica's start offset"],
      ["speed-aware", "ledger-balanced inside: ties go to the lowest index from the replica's start offset"],
      ["cache-affinity", "ties on (load, processed) go to the lowest index"],
      ["uncached-tokens", "ties go to the lowest index from the rotating cursor"],
      // no deterministic policy can hold this law: on two idle ranks relabelled 0 <-> 1 the input is
      // the same, so the choice is the same label, not the relabelled one
      ["ledger-scored", "ties go to the lowest index from the rotating cursor"],
      ["power-of-two-ledger", "the cursor's rank is a label, and it wins ties"],
      ["vllm-kv-pressure+kv-admission", "ties go to the rotating start index (vLLM upstream)"],
      ["vllm-kv-pressure+staleness+kv-admission", "ties go to the rotating start index (vLLM upstream)"],
      [
        "step-time-aware",
        "ties go to the lowest index from the rotating cursor (between identical ranks no deterministic choice is label-free)"
      ]
    ] as const
  ).map(
    ([policy, reason]): LawException => ({
      policy,
      law: "permutationEquivariant",
      reason,
      // two idle ranks, relabelled 0 <-> 1: rank 0 is chosen both times
      counterexample: [[scenario([idle(0), idle(1)]), [1, 0]]]
    })
  ),
  ...(["follow-bootstrap-room", "total-requests", "total-tokens"] as const).map(
    (policy): LawException => ({
      policy,
      law: "healthyRanksOnly",
      reason: "SGLang's DataParallelController reads no health for this method (upstream)",
      // rank 0 is down and still chosen (lowest index, or room 0)
      counterexample: [scenario([idle(0), idle(1)], { status: [false, true] })]
    })
  ),
  {
    policy: "follow-bootstrap-room",
    law: "burstSpread",
    reason: "not load-aware: one bootstrap room sends a whole burst to one rank (SGLang upstream)",
    counterexample: [scenario([idle(0), idle(1)], { requests: 2 })]
  },
  {
    policy: "cache-affinity",
    law: "burstSpread",
    reason:
      "bounded-load affinity: a burst sharing a prefix stays on its holder while within floor(0.25 x least) of the least loaded (by design)",
    // both ranks at 40 running: the holder may take up to 10 more before the bound sends work away
    counterexample: [scenario([busy(0, 40), busy(1, 40)], { requests: 3 })]
  },
  ...(
    [
      ["total-requests", "ties go to the lowest index on every refreshed budget (SGLang upstream)", 1],
      ["total-tokens", "ties go to the lowest index on every refreshed budget (SGLang upstream)", 1],
      ["smg/random", "independent uniform draws: counts drift apart (SMG upstream)", 2],
      ["smg/power-of-two", "two random draws per request: counts drift apart (SMG upstream)", 2],
      [
        "vllm-router/power-of-two",
        "two random draws per round; equal loads go to the first pick: counts drift apart (vllm-router upstream)",
        2
      ],
      ["smg/consistent-hashing", "placement follows the ring, not the counts (SMG upstream)", 2],
      [
        "vllm-router/consistent-hash",
        "placement follows the FurcHash ring, not the counts (vllm-router upstream)",
        2
      ],
      [
        "vllm-router/rendezvous-hash",
        "placement follows the key's scores, not the counts (vllm-router upstream)",
        2
      ],
      [
        "smg/dp-min-token",
        "lowest (used tokens, rank); each fresh snapshot resets the increments (SMG upstream)",
        1
      ],
      [
        "production-stack/prefixaware",
        "first endpoint of the trie match or of the list (production-stack upstream)",
        2
      ]
    ] as const
  ).map(
    ([policy, reason, perRound]): LawException => ({
      policy,
      law: "noSystematicTieWinner",
      reason,
      counterexample: [tieRounds(perRound)]
    })
  ),
  ...(
    [
      ["smg/random", "uniform draws ignore who is idle (SMG upstream)"],
      ["smg/power-of-two", "two random draws ignore who is idle (SMG upstream)"],
      [
        "smg/cache-aware",
        "a match above 0.5 goes to its holder until the imbalance gate opens (SMG upstream)"
      ],
      [
        "smg/prefix-hash",
        "one prompt hashes to one ring point, load bound max(1.25 x mean, mean + 10) (SMG upstream)"
      ],
      ["smg/prefix-hash@v1.9.0", "one prompt hashes to one ring point, load bound 1.25 x mean (SMG v1.9.0)"],
      ["smg/consistent-hashing", "one routing key, one ring point (SMG upstream)"],
      ["vllm-router/rendezvous-hash", "one session key, one highest-scoring worker (vllm-router upstream)"],
      [
        "production-stack/prefixaware",
        "the longest-prefix holder takes every stream (production-stack upstream)"
      ],
      [
        "production-stack/loadaware",
        "a full hit is worth one unit of relative load, and ties go to the smaller url: holders keep winning while idle engines wait (production-stack #1035)"
      ]
    ] as const
  ).map(
    ([policy, reason]): LawException => ({
      policy,
      law: "noStarvationUnderAffinity",
      reason,
      counterexample: [affinityBurst(4, 1)]
    })
  ),
  {
    policy: "vllm-router/consistent-hash",
    law: "noStarvationUnderAffinity",
    reason: "one key, one ring point: streams keyed by request id leave a worker idle (vllm-router upstream)",
    // 3 streams on 3 ranks: 2, 1, 0 with the rank-<i> urls
    counterexample: [affinityBurst(3, 1)]
  },
  ...(
    [
      ["round-robin", "the counter reads no load (SGLang upstream)", fullIdle()],
      ["total-requests", "counts requests only, reads no free KV (SGLang upstream)", fullIdle()],
      [
        "vllm-kv-pressure",
        "waiting + running with a KV penalty on waiting only, no free-KV check (vLLM upstream)",
        fullIdle()
      ],
      ["vllm-prefix-affinity", "vllm-kv-pressure's score, no free-KV check (vLLM #52464)", fullIdle()],
      [
        "vllm-kv-pressure-fixed-start",
        "vllm-kv-pressure's score, no free-KV check (vLLM before #47420)",
        fullIdle()
      ],
      ["smg/round-robin", "the counter reads no load (SMG upstream)", fullIdle()],
      ["smg/random", "a uniform draw reads no load (SMG upstream)", idleFull()],
      ["smg/power-of-two", "the other ranks are never drawn (SMG upstream)", onlyOneFits(0)],
      [
        "vllm-router/power-of-two",
        "request counts only, no free-KV check (vllm-router upstream)",
        onlyOneFits(0)
      ],
      ["smg/least-load", "waiting-uncached tokens and credits, no free-KV check (SMG upstream)", fullIdle()],
      ["smg/cache-aware", "shortest-queue on a miss reads no free KV (SMG upstream)", fullIdle()],
      ["smg/consistent-hashing", "the ring reads no load (SMG upstream)", idleFull()],
      [
        "smg/prefix-hash",
        "a request with no tokens and no key goes to the fewest in flight, no free-KV check (SMG head, #2148)",
        fullIdle()
      ],
      ["vllm-router/consistent-hash", "the ring reads no load (vllm-router upstream)", idleFull()],
      ["vllm-router/rendezvous-hash", "the scores read no load (vllm-router upstream)", fullIdle()],
      ["production-stack/roundrobin", "the cursor reads no load (production-stack upstream)", fullIdle()],
      [
        "production-stack/session",
        "lowest request count on a new session, no KV (production-stack upstream)",
        fullIdle()
      ],
      [
        "production-stack/prefixaware",
        "the first endpoint on a miss (production-stack upstream)",
        idleFull()
      ],
      [
        "production-stack/loadaware",
        "cached fraction and in-flight counts, no KV (production-stack #1035)",
        fullIdle()
      ]
    ] as const
  ).map(
    ([policy, reason, counterexample]): LawException => ({
      policy,
      law: "kvFeasibility",
      reason,
      counterexample: [counterexample]
    })
  ),
  {
    policy: "vllm-kv-pressure",
    law: "unknownNeverAttractive",
    reason:
      "an unknown rank scores as the busiest known; ties go to the rotating start index, whatever is known (vLLM upstream; the own vLLM entries set unknownLosesTies)",
    // two idle ranks, rank 0's row unknown: the scan starts at rank 0 and keeps it on the tie
    counterexample: [
      scenario([idle(0), idle(1)]),
      { rank: 0, donor: 0, hidden: { kind: "unknown" }, heavier: true }
    ]
  },
  {
    policy: "vllm-prefix-affinity",
    law: "unknownNeverAttractive",
    reason: "vllm-kv-pressure's rule: ties go to the rotating start index, whatever is known (vLLM #52464)",
    counterexample: [
      scenario([idle(0), idle(1)]),
      { rank: 0, donor: 0, hidden: { kind: "unknown" }, heavier: true }
    ]
  },
  {
    policy: "vllm-kv-pressure-fixed-start",
    law: "noSystematicTieWinner",
    reason: "the bias #47420 removed: every tie goes to the fixed start index (vLLM before #47420)",
    counterexample: [
      {
        dpSize: 2,
        load: { dpRank: 0, numRunningReqs: 0, numWaitingReqs: 1, numTotalTokens: 0, kvCacheUsage: 0 },
        rounds: 2,
        perRound: 1,
        inputLength: 1
      }
    ]
  },
  ...peerLawExceptions,
  ...peerFairnessExceptions,
  ...trtllmLawExceptions,
  ...vllmLawExceptions
]

function busy(dpRank: number, running: number): RankLoad {
  return { dpRank, timestamp: 1, numRunningReqs: running, numWaitingReqs: 0, numTotalTokens: 0 }
}

function idle(dpRank: number): RankLoad {
  return { dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }
}

/** A scenario observed at 1 s: all ranks healthy unless `status`; `requests` (1) alike, room "4", prefix "h1". */
function scenario(
  loads: ReadonlyArray<RankLoad>,
  o: { readonly status?: ReadonlyArray<boolean>; readonly requests?: number } = {}
): PolicyScenario {
  return {
    dpSize: loads.length,
    status: o.status ?? loads.map(() => true),
    loads,
    requests: Array.from({ length: o.requests ?? 1 }, (_, i) => ({
      requestId: `q${i}`,
      inputLength: 16,
      bootstrapRoom: "4",
      prefixHashes: ["h1"]
    })),
    startSeconds: 1,
    gapsSeconds: [0, 0.0001]
  }
}
