/**
 * loadledger's own policies as data: a `PolicyConfig` (plain JSON) names the weighted terms a
 * policy sums, how it picks among the ranks (all, or power of d choices) and the wrappers around
 * it (`policyFromConfig`, in `Configs.ts`, builds the policy or says which field is wrong).
 *
 * @since 0.6.0
 */
import type { Normalisation } from "./ScoreView.js"
import type { StepCostModel } from "./StepCost.js"

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
 * - `wrappers`: `"staleness"` (`withStaleness`), `"kv-admission"` (`withKvAdmission`) and
 *   `"speed"` (`withSpeed`: token loads weighed by each rank's learned speed; the policy keeps its
 *   `name`), applied in order (the first innermost).
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
  readonly wrappers?: ReadonlyArray<"staleness" | "kv-admission" | "speed"> | undefined
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
