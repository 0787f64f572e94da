/**
 * The registry entries of SGLang's four DataParallelController methods.
 *
 * @since 0.1.0
 */
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { followBootstrapRoom, roundRobin, totalRequests, totalTokens } from "./SglangPolicies.js"

/**
 * Registry entries for SGLang's four DataParallelController methods (`reference: true`):
 * `round-robin`, `follow-bootstrap-room`, `total-requests`, `total-tokens`. The options are unused:
 * upstream's controller has no client count and no randomness (bootstrap rooms come with requests).
 *
 * **When to use**: through `findPolicy` / `policyEntries`, which include these entries.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * const p = findPolicy("total-tokens")!.make({})
 * p.name // => "total-tokens"
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const sglangPolicyEntries: ReadonlyArray<PolicyEntry> = [
  {
    name: "round-robin",
    engine: "sglang",
    reference: true,
    description: "SGLang ROUND_ROBIN: next healthy rank after a counter (data_parallel_controller.py)",
    make: () => erase(roundRobin)
  },
  {
    name: "follow-bootstrap-room",
    engine: "sglang",
    reference: true,
    description: "SGLang FOLLOW_BOOTSTRAP_ROOM: bootstrap room floor-modulo dp size; ignores load and status",
    make: () => erase(followBootstrapRoom)
  },
  {
    name: "total-requests",
    engine: "sglang",
    reference: true,
    description:
      "SGLang TOTAL_REQUESTS: DPBudget refreshed at most every 20 ms, fewest requests, +1 per dispatch, ties to rank 0",
    make: () => erase(totalRequests)
  },
  {
    name: "total-tokens",
    engine: "sglang",
    reference: true,
    description:
      "SGLang TOTAL_TOKENS: DPBudget refreshed at most every 20 ms, min (tokens, requests), +prompt tokens per dispatch",
    make: () => erase(totalTokens)
  }
]
