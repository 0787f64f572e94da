/**
 * loadledger's own policies as data: a `PolicyConfig` (plain JSON) names the weighted terms a
 * policy sums, how it picks among the ranks (all, or power of d choices) and the wrappers around
 * it; `policyFromConfig` builds the policy or says which field is wrong.
 *
 * @since 0.6.0
 */
import type { Policy } from "../Policy.js"
import { buildPolicy } from "./internal/buildConfig.js"
import { checkConfig } from "./internal/checkConfig.js"
import type { Normalisation } from "./ScoreView.js"
import type { StepCostModel } from "./StepCost.js"
import { ledgerTerms, stepTimeTerms } from "./Terms.js"

/**
 * One weighted term of a configuration: a term's name (a key of `ledgerTerms` for the
 * `"scored"` and `"power-of-choices"` kinds, of `stepTimeTerms` for `"step-time"`), its weight
 * (finite, >= 0; 0 keeps a gate's exclusions without weighing it), and for the ledger terms their
 * normalisation (`"min-max"` by default, see `Normalisation`). `kvFull` / `kvRoom` (0..1) are the
 * thresholds of the `kvPressureGate` term only.
 *
 * @category own policies
 * @since 0.6.0
 */
export interface TermConfig {
  readonly term: string
  readonly weight: number
  readonly normalise?: Normalisation | undefined
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * A policy as data, JSON-serialisable: what `tune` searches and `--policy-config` takes.
 *
 * - `kind`: `"scored"` (the weighted sum of normalised ledger terms over every healthy rank,
 *   `makeScored`), `"power-of-choices"` (the same over the cursor's rank and `choices` drawn ones,
 *   `makePowerOfChoices`), `"step-time"` (`makeStepTimeAware`: its terms are in seconds of lockstep
 *   step time), `"upstream"` (`policy`, an upstream balancer: `"vllm-kv-pressure"`), or
 *   `"cache-affinity"` (`makeCacheAffinity`, whole: its gates are not a sum of terms).
 * - `terms`: the weighted terms (required for `"scored"`, `"power-of-choices"`, `"step-time"`;
 *   a `"step-time"` term left out keeps its default weight).
 * - `tieBreakers`: ledger term names compared raw, in order, between equal sums.
 * - `choices` (`"power-of-choices"`, default 2), `kvFeasible` (true), `staleAfterSeconds` (1),
 *   `inclusionMarginSeconds` (0), `maxIndexedBlocks` (65,536): as in `makeScored`.
 * - `wrappers`: `"staleness"` (`withStaleness`) and `"kv-admission"` (`withKvAdmission`), applied
 *   in order (the first innermost).
 * - `name`: the policy's name.
 *
 * @category own policies
 * @since 0.6.0
 */
export interface PolicyConfig {
  readonly kind: "scored" | "power-of-choices" | "step-time" | "upstream" | "cache-affinity"
  readonly name?: string | undefined
  readonly terms?: ReadonlyArray<TermConfig> | undefined
  readonly tieBreakers?: ReadonlyArray<string> | undefined
  readonly choices?: number | undefined
  readonly policy?: "vllm-kv-pressure" | undefined
  readonly kvFeasible?: boolean | undefined
  readonly staleAfterSeconds?: number | undefined
  readonly inclusionMarginSeconds?: number | undefined
  readonly maxIndexedBlocks?: number | undefined
  readonly wrappers?: ReadonlyArray<"staleness" | "kv-admission"> | undefined
}

/**
 * Why a configuration was refused: `field` is the path of the value at fault (`"kind"`,
 * `"terms[1].term"`, `"terms[0].weight"`, `"wrappers[0]"`, an unknown key's own name ...).
 *
 * @category own policies
 * @since 0.6.0
 */
export interface PolicyConfigError {
  readonly _tag: "PolicyConfigError"
  readonly field: string
  readonly message: string
}

/**
 * What a configured policy is built for: the front ends (`clientCount` / `clientIndex`), the draws'
 * `seed`, the engines' running-request cap and step cost model (`"step-time"` only), as
 * `PolicyOptions`.
 *
 * @category own policies
 * @since 0.6.0
 */
export interface ConfigOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly seed?: number | undefined
  readonly maxRunningRequests?: number | undefined
  readonly stepCost?: StepCostModel | undefined
}

/**
 * Build the policy a {@link PolicyConfig} describes, or a {@link PolicyConfigError} naming the
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
