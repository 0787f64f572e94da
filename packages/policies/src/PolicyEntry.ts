/**
 * What a registry entry is (`PolicyEntry`) and the options its `make` takes (`PolicyOptions`).
 *
 * A leaf below the registry: every family's `Entries.ts` and the option checks import these
 * types from here, and `Registry.ts` imports every family, so no family imports the registry back
 * (issue 29). Re-exported unchanged from the package index.
 *
 * @since 0.1.0
 */
import type { StepCostModel } from "./own/StepCost.js"
import type { Policy } from "./Policy.js"

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
 * `engine` is the engine whose router the policy reproduces (`"trtllm"` since 0.7.0: TensorRT-LLM's
 * ADP routers run inside its executor), the engine `simulate`, `capacity` and `goodput` run it on
 * when `--engine` is not given; `"any"` for routers in front of any engine (the peers', the own).
 * `reference` is true for policies that reproduce upstream exactly; false for loadledger's own.
 * `proposed` (since 0.7.0) is set on an entry that reproduces an upstream change not merged when
 * it was read: the pull request, as `owner/repo#number` (e.g. `"vllm-project/vllm#52464"`), so a
 * user can ask whether a proposal would help their trace before it lands. Absent on merged
 * behaviour and on loadledger's own policies. `loadledger list policies` shows it.
 *
 * @category registry
 * @since 0.1.0
 */
export interface PolicyEntry {
  readonly name: string
  readonly engine: "sglang" | "vllm" | "trtllm" | "any"
  readonly reference: boolean
  readonly description: string
  /** @since 0.7.0 */
  readonly proposed?: string | undefined
  readonly make: (options: PolicyOptions) => Policy<unknown>
}
