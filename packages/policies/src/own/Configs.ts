/**
 * The configuration of every registered own policy, as data (`PolicyConfig`), and `policyFromConfig`
 * that checks (`internal/checkConfig.ts`) and builds one: the registry builds each entry from its
 * configuration, and `tune` / `--policy-config` start from them.
 *
 * @since 0.6.0
 */
import type { Policy } from "../Policy.js"
import { makeVllmLb } from "../vllm/VllmLbPolicy.js"
import { makeCacheAffinity } from "./CacheAffinity.js"
import { checkConfig } from "./internal/checkConfig.js"
import type { ConfigOptions, PolicyConfig, PolicyConfigError } from "./PolicyConfig.js"
import { makePowerOfChoices } from "./PowerOfChoices.js"
import { makeScored } from "./Scored.js"
import { ledgerTerms } from "./Scorers.js"
import { makeStepTimeAware } from "./StepTimeAware.js"
import { stepTimeTerms } from "./StepTimeTypes.js"
import { withKvAdmission } from "./WithKvAdmission.js"
import { withSpeed } from "./WithSpeed.js"
import { withStaleness } from "./WithStaleness.js"

/**
 * Each registered own policy's configuration, by registry name: the ledger terms of `makeScored`
 * (`ledger-balanced`, `-requests`, `uncached-tokens`, `ledger-scored`), power of d = 2
 * (`power-of-two-ledger`), `step-time-aware`'s seconds (the terms left out keep their front-end
 * defaults; `speed-aware` is them inside the `"speed"` wrapper), `cache-affinity` whole (its gates are rules, not a
 * sum), and vLLM's balancer inside the wrappers. What each weighs and why: docs/own-policies.md.
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
 * Check a `PolicyConfig` given as untyped JSON (`JSON.parse` output) and build it, or a
 * `PolicyConfigError` naming the first field at fault (`kind`, `terms[i].term` with the known names,
 * `terms[i].weight`, a term the kind does not take, `normalise`, `choices`, `wrappers[i]`, a limit,
 * or a key no configuration has: a typo is not ignored). `options`: the deployment's (front ends,
 * seed, running cap, step cost), as `PolicyOptions`. **When to use**: `--policy-config`, `tune`.
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

const scoredOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  const shared = {
    name: c.name,
    scorers: (c.terms ?? []).map((t) => ({
      scorer: ledgerTerms[t.term]!(t),
      weight: t.weight,
      normalise: t.normalise
    })),
    tieBreakers: c.tieBreakers?.map((name) => ledgerTerms[name]!({})),
    kvFeasible: c.kvFeasible,
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    staleAfterSeconds: c.staleAfterSeconds,
    inclusionMarginSeconds: c.inclusionMarginSeconds,
    maxIndexedBlocks: c.maxIndexedBlocks
  }
  return (
    c.kind === "scored"
      ? makeScored(shared)
      : makePowerOfChoices({ ...shared, choices: c.choices ?? 2, seed: o.seed })
  ) as Policy<unknown>
}

const stepTimeOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  const weights: Record<string, number> = {}
  for (const t of c.terms ?? []) {
    const option = stepTimeTerms[t.term]
    if (option !== undefined) weights[option] = t.weight
  }
  return makeStepTimeAware({
    ...weights,
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    maxRunningRequests: o.maxRunningRequests,
    cost: o.stepCost,
    staleAfterSeconds: c.staleAfterSeconds,
    inclusionMarginSeconds: c.inclusionMarginSeconds,
    maxIndexedBlocks: c.maxIndexedBlocks
  }) as Policy<unknown>
}

const baseOf = (c: PolicyConfig, o: ConfigOptions): Policy<unknown> => {
  if (c.kind === "scored" || c.kind === "power-of-choices") return scoredOf(c, o)
  if (c.kind === "step-time") return stepTimeOf(c, o)
  if (c.kind === "cache-affinity") return makeCacheAffinity() as Policy<unknown>
  return makeVllmLb({
    clientCount: o.clientCount,
    clientIndex: o.clientIndex,
    unknownLosesTies: true
  }) as Policy<unknown>
}

/**
 * The policy a `PolicyConfig` describes, unchecked (the registry's: `policyFromConfig` checks first),
 * wrappers applied in order (the first innermost).
 *
 * @example
 * ```ts
 * import { buildPolicy, ownPolicyConfigs } from "./Configs.js"
 * buildPolicy(ownPolicyConfigs["ledger-scored"]!, {}).name // => "ledger-scored"
 * ```
 *
 * @since 0.6.0
 */
export const buildPolicy = (c: PolicyConfig, options: ConfigOptions): Policy<unknown> => {
  let p = baseOf(c, options)
  for (const w of c.wrappers ?? [])
    p = (
      w === "staleness"
        ? withStaleness(p, { clientCount: options.clientCount })
        : w === "speed"
          ? withSpeed(p, { name: c.name ?? p.name })
          : withKvAdmission(p, { clientCount: options.clientCount })
    ) as Policy<unknown>
  return p
}
