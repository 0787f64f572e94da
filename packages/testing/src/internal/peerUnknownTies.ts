/**
 * The peer routers' exceptions to `unknownNeverAttractive` (the tie case), joined into
 * `peerLawExceptions` (LawExceptionsPeers.ts): where an unknown worker wins a tie against an equal
 * known one because upstream's own tie rule decides, or because upstream counts an unreported worker
 * as idle.
 */

import type { LawException } from "../LawTypes.js"
import { idleScenario, peerScenario } from "./lawCases.js"

// Why an unknown row wins a tie against an equal known one (the tie case of unknownNeverAttractive):
// loadledger scores an unknown worker as the busiest known one (upstream always has every field), and
// upstream's own tie rule then decides, with no notion of a load being unknown. Each counterexample:
// idle ranks (rank `known` also reporting KV usage and waiting uncached tokens), the row of rank
// `rank` unknown and chosen, and not chosen when it reports one more of each count than the donor.
const unknownTieCases: ReadonlyArray<{
  readonly policy: string
  readonly reason: string
  readonly status: ReadonlyArray<boolean>
  readonly rank: number
  readonly full?: number | undefined
  readonly startSeconds?: number | undefined
  readonly gapSeconds?: number | undefined
}> = [
  {
    policy: "smg/least-load",
    reason: "an unknown worker scores as the busiest known; ties go to the first worker (SMG upstream)",
    status: [true, true],
    rank: 0,
    full: 1
  },
  {
    policy: "llm-d/profile",
    reason:
      "an unknown endpoint scores as the busiest known; equal scores go by the picker's draw (llm-d upstream)",
    status: [true, true],
    rank: 0
  },
  {
    policy: "llm-d/utilization-detector",
    reason:
      "an unknown endpoint counts as the busiest known; equal scores go by the picker's draw (llm-d upstream)",
    status: [true, true, false, true, true, true],
    rank: 5,
    startSeconds: 1.151,
    gapSeconds: 0.05
  }
]

/** The rows: each case above, and vllm-router's unreported worker. */
export const peerUnknownTieExceptions: ReadonlyArray<LawException> = [
  ...unknownTieCases.map(
    (c): LawException => ({
      policy: c.policy,
      law: "unknownNeverAttractive",
      reason: c.reason,
      counterexample: [
        idleScenario(c.status, c.full, c.startSeconds ?? 1, c.gapSeconds ?? 0),
        { rank: c.rank, donor: 0, hidden: { kind: "unknown" }, heavier: true }
      ]
    })
  ),
  {
    policy: "vllm-router/power-of-two",
    law: "unknownNeverAttractive",
    reason:
      "a worker missing from the poll counts only its router in-flight requests (get_worker_load: no cached entry), so an unreported worker looks idle (vllm-router upstream)",
    // equal rows (2 running + 1 waiting = 3) on 2 ranks; rank 0 unknown: 0 against 3
    counterexample: [
      peerScenario(2, 1, false),
      { rank: 0, donor: 0, hidden: { kind: "unknown" }, heavier: true }
    ]
  }
]
