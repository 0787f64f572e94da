/**
 * The one table of policies that break a policy law on purpose.
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/policies"
import type { LawInput, LawName, PolicyScenario } from "./PolicyLaws.js"

/**
 * A registered policy that breaks `law` on purpose: a one-line `reason` (upstream fidelity, or a
 * documented choice) and a `counterexample` (the law's input) at which the law fails.
 *
 * @category laws
 * @since 0.2.0
 */
export type LawException = {
  readonly [K in LawName]: {
    readonly policy: string
    readonly law: K
    readonly reason: string
    readonly counterexample: LawInput[K]
  }
}[LawName]

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
      ["ledger-balanced", "ties go to the lowest index from the replica's start offset"],
      ["ledger-balanced-requests", "ties go to the lowest index from the replica's start offset"],
      ["cache-affinity", "ties on (load, processed) go to the lowest index"]
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
  }
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
