/**
 * The configuration of every registered own policy, as data (`PolicyConfig`), and `policyFromConfig`
 * that checks and builds one: the registry builds each entry from its configuration, and `tune` /
 * `--policy-config` start from them.
 *
 * @since 0.6.0
 */
import type { Policy } from "../Policy.js"
import { buildPolicy } from "./internal/buildConfig.js"
import { checkConfig } from "./internal/checkConfig.js"
import type { ConfigOptions, PolicyConfig, PolicyConfigError } from "./PolicyConfig.js"
import { ledgerTerms, stepTimeTerms } from "./Terms.js"

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
 * - `speed-aware`: `step-time-aware`'s terms inside the `"speed"` wrapper (`withSpeed`): each rank's
 *   predicted seconds divided by the speed it is learned to run at (since 0.8.0; before,
 *   `ledger-balanced`'s tokens in full-speed units, which starved a slow rank).
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
  "speed-aware": {
    kind: "step-time",
    name: "speed-aware",
    terms: [
      { term: "queuedPrefill", weight: 1 },
      { term: "ownPrefill", weight: 1 },
      { term: "slotWait", weight: 0.3 }
    ],
    wrappers: ["speed"]
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

/**
 * The shipped default configuration, `loadledger-default`: the own policy that is the best single
 * choice across the shared traces by `pnpm compare --select` (mean held-out goodput as a share of
 * the balance bound over the blocks; figures and how it was chosen in the root README, "Our policy,
 * tuned to your trace"). Today `step-time-aware`'s terms, renamed; `loadledger tune` starts from it.
 *
 * @example
 * ```ts
 * import { defaultPolicyConfig, policyFromConfig } from "@loadledger/policies"
 * defaultPolicyConfig.name // => "loadledger-default"
 * defaultPolicyConfig.kind // => "step-time"
 * "_tag" in policyFromConfig(defaultPolicyConfig) // => false
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const defaultPolicyConfig: PolicyConfig = {
  ...ownPolicyConfigs["step-time-aware"]!,
  name: "loadledger-default"
}

/**
 * Build the policy a `PolicyConfig` describes, or a `PolicyConfigError` naming the
 * first field at fault: a `kind` or a term that does not exist (`terms[i].term`, with the known
 * names), a weight that is negative or not finite (`terms[i].weight`), a term the kind does not
 * take, a bad `normalise`, `choices`, `wrappers[i]` or limit, or a key no configuration has (a typo
 * is not silently ignored). The input is checked as untyped JSON (`JSON.parse` output).
 *
 * **When to use**: to run a tuned or hand-written configuration (`--policy-config`), or one of the
 * registered ones (`ownPolicyConfigs`) with changed weights. Options that concern the deployment
 * rather than the policy (front ends, seed, the running-request cap, the step cost model) are the
 * second argument, as the registry's `PolicyOptions`.
 *
 * @example
 * ```ts
 * import { policyFromConfig } from "@loadledger/policies"
 * const p = policyFromConfig({
 *   kind: "scored",
 *   name: "tokens-and-queue",
 *   terms: [{ term: "tokens", weight: 1 }, { term: "waiting", weight: 0.5 }],
 *   tieBreakers: ["requests"]
 * })
 * "_tag" in p ? p : p.name // => "tokens-and-queue"
 * const rows = [0, 1].map((dpRank) => ({ dpRank, timestamp: 1, numRunningReqs: 0, numWaitingReqs: dpRank, numTotalTokens: 100 }))
 * const r = "_tag" in p ? p : p.route(p.observe(p.init(2), rows, 1), { requestId: "a", inputLength: 10 }, 1)
 * r._tag === "Routed" && r.rank // => 0
 * policyFromConfig({ kind: "scored", terms: [{ term: "tokenz", weight: 1 }] })
 * // => { _tag: "PolicyConfigError", field: "terms[0].term", message: "unknown term \"tokenz\" (known: tokens, requests, running, waiting, kvCacheUsage, waitingUncachedTokens, uncachedPromptTokens, loadTokens, kvPressureGate)" }
 * policyFromConfig({ kind: "scored", terms: [{ term: "tokens", weight: -1 }] })
 * // => { _tag: "PolicyConfigError", field: "terms[0].weight", message: "weight must be a finite number >= 0, got -1" }
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const policyFromConfig = (
  config: unknown,
  options: ConfigOptions = {}
): Policy<unknown> | PolicyConfigError => {
  const bad = checkConfig(config, ledgerTerms, stepTimeTerms)
  if (bad !== undefined) return { _tag: "PolicyConfigError", ...bad }
  return buildPolicy(config as PolicyConfig, options)
}
