/**
 * The registry of every policy by name (`findPolicy`, `policyEntries`): the SGLang, vLLM, own and peer entries in one list, each with its engine, whether it reproduces upstream, a description and a `make(options)`.
 *
 * @since 0.1.0
 */
import { checkedEntries } from "./internal/checkedEntries.js"
import { ownPolicyEntries } from "./own/Entries.js"
import type { StepCostModel } from "./own/StepCost.js"
import type { Policy } from "./Policy.js"
import { aibrixPolicyEntries } from "./peers/aibrix/Entries.js"
import { dynamoPolicyEntries } from "./peers/dynamo/Entries.js"
import { llmdPolicyEntries } from "./peers/llm-d/Entries.js"
import { productionStackPolicyEntries } from "./peers/production-stack/Entries.js"
import { smgPolicyEntries } from "./peers/smg/Entries.js"
import { sglangPolicyEntries } from "./sglang/Entries.js"
import { vllmPolicyEntries } from "./vllm/Entries.js"

/**
 * Options a registry entry may use to build its policy. `clientCount` / `clientIndex` describe
 * vLLM front ends (API-server processes); `seed` feeds any policy randomness;
 * `maxRunningRequests` is the engines' per-rank cap on running requests (SGLang
 * `--max-running-requests`, vLLM `--max-num-seqs`) where the router's operator knows it: a policy
 * that prices the wait for a running slot reads it (`step-time-aware`), the others ignore it.
 * `stepCost` is the engines' step cost model (fit it once with `stepCostFrom` from the served
 * model's step-time function): a policy that prices prefill and decode in seconds reads it
 * (`step-time-aware`; unset, the GLM-5.3/H200 model `glm53H200StepCost`), the others ignore it.
 * The simulator sets both from its own configuration.
 *
 * Every registered entry refuses bad options alike, whether it reads them or not
 * (`checkPolicyOptions`: `clientCount` an integer >= 1, `clientIndex` an integer in
 * `0..clientCount-1`, `seed` a safe integer, `maxRunningRequests` an integer >= 1, each when
 * present): the policy `make` returns answers every `route` with that `PolicyError`
 * `InvalidInput` naming the option. Its `init` takes a `dpSize` that is a safe integer >= 0; for
 * another (2.5, -1, NaN) every `route` is an `InvalidInput` naming `dpSize` (since 0.4.0; 27
 * entries threw `RangeError` from inside `init`, 7 routed to rank 0 with 2.5).
 *
 * @category registry
 * @since 0.1.0
 */
export interface PolicyOptions {
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly seed?: number | undefined
  /** @since 0.4.0 */
  readonly maxRunningRequests?: number | undefined
  /** @since 0.4.0 */
  readonly stepCost?: StepCostModel | undefined
}

/**
 * A named policy the CLI, the simulator and the live router can pick by name.
 * `reference` is true for policies that reproduce upstream exactly; false for loadledger's own.
 *
 * @category registry
 * @since 0.1.0
 */
export interface PolicyEntry {
  readonly name: string
  readonly engine: "sglang" | "vllm" | "any"
  readonly reference: boolean
  readonly description: string
  readonly make: (options: PolicyOptions) => Policy<unknown>
}

// Each policy module adds its entries here (one line each); every `make` checks its options first.
const entries: ReadonlyArray<PolicyEntry> = checkedEntries([
  ...sglangPolicyEntries,
  ...vllmPolicyEntries,
  ...ownPolicyEntries,
  ...smgPolicyEntries,
  ...productionStackPolicyEntries,
  ...llmdPolicyEntries,
  ...dynamoPolicyEntries,
  ...aibrixPolicyEntries
])

/**
 * Every registered policy, reference policies first.
 *
 * @example
 * ```ts
 * import { policyEntries } from "@loadledger/policies"
 * const names = policyEntries().map((e) => e.name)
 * names.includes("total-tokens") && names.includes("vllm-kv-pressure") // => true
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const policyEntries = (): ReadonlyArray<PolicyEntry> =>
  [...entries].sort((a, b) => Number(b.reference) - Number(a.reference))

/**
 * Look a policy up by name; `undefined` when no policy has that name (the caller reports it,
 * listing `policyEntries()`).
 *
 * **When to use**: to pick a policy from a name given on a command line or in a config.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("total-requests")?.engine // => "sglang"
 * findPolicy("no-such-policy") // => undefined
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const findPolicy = (name: string): PolicyEntry | undefined => entries.find((e) => e.name === name)
