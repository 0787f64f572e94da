/**
 * The registry entries of the llm-d policies (one line per registered name).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { llmdProfiles, makeLlmdPolicy } from "./LlmdPolicy.js"

const descriptions: Readonly<Record<string, string>> = {
  "llm-d/profile":
    "llm-d default profile: queue 2 + kv-cache-utilization 2 + prefix-cache 3, max-score picker",
  "llm-d/profile-load-aware":
    "llm-d profile: load-aware 1 + active-request 2 + prefix-cache 3, max-score picker",
  "llm-d/queue-scorer": "llm-d queue-scorer alone: min-max of waiting queue, max-score picker",
  "llm-d/kv-cache-utilization-scorer":
    "llm-d kv-cache-utilization-scorer alone: 1 - KV usage, max-score picker",
  "llm-d/running-requests-size-scorer":
    "llm-d running-requests-size-scorer alone: min-max of running requests",
  "llm-d/load-aware-scorer": "llm-d load-aware-scorer alone: 0.5 * (1 - min(q, 128)/128)",
  "llm-d/active-request-scorer": "llm-d active-request-scorer alone: router in-flight requests",
  "llm-d/token-load-scorer": "llm-d token-load-scorer alone: in-flight + uncached tokens",
  "llm-d/prefix-cache-scorer":
    "llm-d prefix-cache-scorer alone: approximate prefix index with per-endpoint LRU",
  "llm-d/weighted-random-picker": "llm-d default scorers under the weighted-random (A-Res) picker",
  "llm-d/utilization-detector":
    "llm-d utilization detector (stale / saturated filter, fail-open) before queue-scorer"
}

/**
 * Registry entries for the llm-d Router (`reference: true`): the profiles of
 * `LlmD.llmdProfiles`, each built with `LlmD.makeLlmdPolicy` (`seed` seeds the picker's draws).
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("llm-d/profile")!.make({ seed: 1 }).name // => "llm-d/profile"
 * ```
 *
 * @category registry
 * @since 0.2.0
 */
export const llmdPolicyEntries: ReadonlyArray<PolicyEntry> = Object.entries(llmdProfiles).map(
  ([name, profile]) => ({
    name,
    engine: "any",
    reference: true,
    description: descriptions[name] ?? name,
    make: (o) => erase(makeLlmdPolicy({ name, profile, seed: o.seed }))
  })
)
