/**
 * The law exceptions of `vllm-power-of-two` (vllm-project/vllm#43279, proposed): up to four
 * engines it is `vllm-kv-pressure` and breaks what that entry breaks; above four it compares only
 * two drawn engines, so it gives up the global least on purpose. Joined into `lawExceptions`
 * (LawExceptions.ts).
 *
 * @since 0.7.0
 */
import type { RankLoad } from "@loadledger/policies"
import { affinityBurst, fullIdle, idleScenario, peerScenario } from "./internal/lawCases.js"
import type { LawException } from "./LawTypes.js"

const P2C = "vllm-power-of-two"
const idle = (dpRank: number): RankLoad => ({
  dpRank,
  numRunningReqs: 0,
  numWaitingReqs: 0,
  numTotalTokens: 0
})

/**
 * The rows of `lawExceptions` for `vllm-power-of-two`: on two ranks (the full scan) the exceptions
 * of `vllm-kv-pressure` (ties to the rotating start, an unknown row scored as the busiest known,
 * no free-KV check); on eight ranks (the draws) a burst or a tie can land on a drawn pair while
 * another rank idles.
 *
 * **When to use**: read it to see why the P2C proposal breaks a law; the registry runner checks
 * each counterexample.
 *
 * @example
 * ```ts
 * import { vllmLawExceptions } from "@loadledger/testing"
 * vllmLawExceptions.some((x) => x.policy === "vllm-power-of-two" && x.law === "burstSpread") // => true
 * ```
 *
 * @category laws
 * @since 0.7.0
 */
export const vllmLawExceptions: ReadonlyArray<LawException> = [
  {
    policy: P2C,
    law: "permutationEquivariant",
    reason: "up to 4 engines, vllm-kv-pressure's scan: ties go to the rotating start index (vLLM #43279)",
    counterexample: [[peerScenario(2, 1, false), [1, 0]]]
  },
  {
    policy: P2C,
    law: "unknownNeverAttractive",
    reason:
      "up to 4 engines, vllm-kv-pressure's rule: an unknown rank scores as the busiest known and the tie goes to the start index (vLLM #43279)",
    counterexample: [
      idleScenario([true, true], undefined, 1, 0),
      { rank: 0, donor: 0, hidden: { kind: "unknown" }, heavier: true }
    ]
  },
  {
    policy: P2C,
    law: "kvFeasibility",
    reason: "vllm-kv-pressure's score, no free-KV check (vLLM #43279)",
    counterexample: [fullIdle()]
  },
  {
    policy: P2C,
    law: "burstSpread",
    reason:
      "above 4 engines only two drawn engines are compared: a burst can pile on a pair while others idle (vLLM #43279)",
    counterexample: [peerScenario(8, 8, false)]
  },
  {
    policy: P2C,
    law: "noSystematicTieWinner",
    reason: "above 4 engines two seeded draws per request: counts drift apart (vLLM #43279)",
    counterexample: [{ dpSize: 8, load: idle(0), rounds: 6, perRound: 2, inputLength: 10 }]
  },
  {
    policy: P2C,
    law: "noStarvationUnderAffinity",
    reason: "above 4 engines the draws ignore who is idle: a rank can go undrawn (vLLM #43279)",
    counterexample: [affinityBurst(8, 1)]
  }
]
