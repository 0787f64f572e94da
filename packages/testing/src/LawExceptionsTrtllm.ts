/**
 * The law exceptions of the TensorRT-LLM attention-DP routers (`trtllm/*`): upstream behaviour
 * reproduced on purpose, each with a counterexample the registry runner checks. Joined into
 * `lawExceptions` (LawExceptions.ts).
 *
 * @since 0.7.0
 */
import { affinityBurst, fullIdle, peerScenario } from "./internal/lawCases.js"
import type { KvCase, LawException, PolicyScenario } from "./LawTypes.js"

/** Five full ranks but the last, which has one free token: the shuffle for request "q" picks a full one. */
const kvShuffled: KvCase = {
  loads: [0, 1, 2, 3, 4].map((dpRank) => ({
    dpRank,
    timestamp: 10,
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numTotalTokens: dpRank === 4 ? 19999 : 20000,
    numUsedTokens: dpRank === 4 ? 19999 : 20000,
    kvCacheUsage: dpRank === 4 ? 0.99995 : 1,
    kvAvailableTokens: dpRank === 4 ? 1 : 0,
    maxTotalNumTokens: 20000
  })),
  inputLength: 1
}

/** Three idle ranks, three 3-token requests sharing block h1: the prefix keeps two on one rank. */
const prefixBurst: PolicyScenario = {
  dpSize: 3,
  status: [true, true, true],
  loads: [0, 1, 2].map((dpRank) => ({
    dpRank,
    timestamp: 1,
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numTotalTokens: 0
  })),
  requests: [0, 1, 2].map((i) => ({
    requestId: `00000000-0000-1000-8000-000000000000-${i}`,
    inputLength: 3,
    bootstrapRoom: "0",
    prefixHashes: ["h1"]
  })),
  startSeconds: 1,
  gapsSeconds: [0, 0.0001, 0.0001, 0.0001]
}

const HEAP = "equal (tokens, requests) go to the lowest rank, the heap's tuple order (TensorRT-LLM upstream)"

/**
 * The `trtllm/*` rows of `lawExceptions`. The routers read their own active requests and prompt
 * tokens, not the load rows nor free KV (upstream allgathers no KV figure), so they break
 * `kvFeasibility`; ties go by the heap's rank order (default), a `random.Random(request id)`
 * shuffle (KV-cache-aware) or the round-robin cursor (conversation affinity), so relabelling the
 * ranks keeps the label; a conversation (and, for the KV-cache-aware router, a shared prefix) stays
 * on its rank.
 *
 * @example
 * ```ts
 * import { trtllmLawExceptions } from "@loadledger/testing"
 * trtllmLawExceptions.some((x) => x.policy === "trtllm/default" && x.law === "kvFeasibility") // => true
 * ```
 *
 * @category laws
 * @since 0.7.0
 */
export const trtllmLawExceptions: ReadonlyArray<LawException> = [
  ...(
    [
      ["trtllm/default", HEAP],
      [
        "trtllm/kv-cache-aware",
        "ties go to the first rank of a shuffle seeded by the request id (TensorRT-LLM upstream)"
      ],
      [
        "trtllm/conversation-affinity",
        "new conversations go round-robin from rank 0 by position (TensorRT-LLM upstream)"
      ]
    ] as const
  ).map(
    ([policy, reason]): LawException => ({
      policy,
      law: "permutationEquivariant",
      reason,
      counterexample: [[peerScenario(2, 1, true), [1, 0]]]
    })
  ),
  ...(["trtllm/default", "trtllm/conversation-affinity"] as const).map(
    (policy): LawException => ({
      policy,
      law: "kvFeasibility",
      reason:
        "routes by active requests and prompt tokens; no free-KV figure is allgathered (TensorRT-LLM upstream)",
      counterexample: [fullIdle()]
    })
  ),
  {
    policy: "trtllm/conversation-affinity",
    law: "burstSpread",
    reason:
      "a conversation returns to its rank while that rank is under max_num_active_requests (TensorRT-LLM upstream)",
    counterexample: [peerScenario(2, 2, true)]
  },
  {
    policy: "trtllm/kv-cache-aware",
    law: "kvFeasibility",
    reason:
      "routes by active prompt tokens net of prefix matches; no free-KV figure is allgathered (TensorRT-LLM upstream)",
    counterexample: [kvShuffled]
  },
  {
    policy: "trtllm/kv-cache-aware",
    law: "burstSpread",
    reason: "a cached prefix outweighs the normalised load term (TensorRT-LLM upstream)",
    counterexample: [prefixBurst]
  },
  {
    policy: "trtllm/kv-cache-aware",
    law: "noStarvationUnderAffinity",
    reason: "streams with cached prefixes stay on the ranks that first served them (TensorRT-LLM upstream)",
    counterexample: [affinityBurst(4, 1)]
  }
]
