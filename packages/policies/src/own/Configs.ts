/**
 * The configuration of every registered own policy, as data (`PolicyConfig`): the registry builds
 * each entry from its configuration, and `tune` / `--policy-config` start from them.
 *
 * @since 0.6.0
 */
import type { PolicyConfig } from "./PolicyConfig.js"

/**
 * Each registered own policy's configuration, by registry name:
 *
 * - `ledger-balanced`: `tokens` (1), the `kvPressureGate`, ties by `requests`: least (tokens,
 *   requests) over the in-flight ledger (see `makeLedgerBalanced`).
 * - `ledger-balanced-requests`: `requests` (1), the gate, ties by `tokens`.
 * - `uncached-tokens`: `loadTokens` + `uncachedPromptTokens`, both raw (`"none"`) and weight 1:
 *   tokens the rank holds plus the prompt tokens it would still prefill (see `makeUncachedTokens`).
 * - `ledger-scored`: `tokens` (1) + `uncachedPromptTokens` (0.5), min-max, the gate, ties by `requests`.
 * - `power-of-two-ledger`: power of d = 2 choices on `tokens` (1) with the gate, ties by `requests`.
 * - `step-time-aware`: its terms in seconds, `queuedPrefill` and `ownPrefill` (1), `slotWait` 0.3 s
 *   per request over the cap; `decodeLoad` (8 with one front end, 0 with several) and `homeCredit`
 *   (0 with one, 0.3 with several) are left to their front-end defaults (see `makeStepTimeAware`).
 * - `cache-affinity`: whole (`makeCacheAffinity`): its load gates, session table and hysteresis
 *   decide by rules, not by a sum of terms.
 * - `vllm-kv-pressure+kv-admission` / `vllm-kv-pressure+staleness+kv-admission`: vLLM's balancer
 *   (upstream, known-first ties) inside the wrappers, the first innermost.
 *
 * **When to use**: to see what a registered policy weighs, or to start a tuned configuration from
 * one (`policyFromConfig({ ...ownPolicyConfigs["ledger-scored"], terms: [...] })`).
 *
 * @example
 * ```ts
 * import { ownPolicyConfigs, policyFromConfig } from "@loadledger/policies"
 * ownPolicyConfigs["ledger-balanced"]!.terms
 * // => [{ term: "tokens", weight: 1 }, { term: "kvPressureGate", weight: 0 }]
 * const p = policyFromConfig(JSON.parse(JSON.stringify(ownPolicyConfigs["uncached-tokens"])))
 * "_tag" in p ? p : p.name // => "uncached-tokens"
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const ownPolicyConfigs: Readonly<Record<string, PolicyConfig>> = {
  "ledger-balanced": {
    kind: "scored",
    name: "ledger-balanced",
    terms: [
      { term: "tokens", weight: 1 },
      { term: "kvPressureGate", weight: 0 }
    ],
    tieBreakers: ["requests"]
  },
  "ledger-balanced-requests": {
    kind: "scored",
    name: "ledger-balanced-requests",
    terms: [
      { term: "requests", weight: 1 },
      { term: "kvPressureGate", weight: 0 }
    ],
    tieBreakers: ["tokens"]
  },
  "cache-affinity": { kind: "cache-affinity" },
  "uncached-tokens": {
    kind: "scored",
    name: "uncached-tokens",
    terms: [
      { term: "loadTokens", weight: 1, normalise: "none" },
      { term: "uncachedPromptTokens", weight: 1, normalise: "none" }
    ]
  },
  "step-time-aware": {
    kind: "step-time",
    name: "step-time-aware",
    terms: [
      { term: "queuedPrefill", weight: 1 },
      { term: "ownPrefill", weight: 1 },
      { term: "slotWait", weight: 0.3 }
    ]
  },
  "ledger-scored": {
    kind: "scored",
    name: "ledger-scored",
    terms: [
      { term: "tokens", weight: 1 },
      { term: "uncachedPromptTokens", weight: 0.5 },
      { term: "kvPressureGate", weight: 0 }
    ],
    tieBreakers: ["requests"]
  },
  "power-of-two-ledger": {
    kind: "power-of-choices",
    name: "power-of-two-ledger",
    choices: 2,
    terms: [
      { term: "tokens", weight: 1 },
      { term: "kvPressureGate", weight: 0 }
    ],
    tieBreakers: ["requests"]
  },
  "vllm-kv-pressure+kv-admission": {
    kind: "upstream",
    policy: "vllm-kv-pressure",
    wrappers: ["kv-admission"]
  },
  "vllm-kv-pressure+staleness+kv-admission": {
    kind: "upstream",
    policy: "vllm-kv-pressure",
    wrappers: ["staleness", "kv-admission"]
  }
}
