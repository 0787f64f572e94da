/**
 * The registry entries of the Dynamo policies (one line per registered name).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { makeDynamoKvPolicy, makeDynamoVllmPolicy } from "./DynamoPolicy.js"

/**
 * Registry entries for NVIDIA Dynamo's KV router (`reference: true`): `dynamo/kv` (default cost
 * selector, temperature 0), `dynamo/kv-t0.5` (the same sampled at `router_temperature` 0.5) and
 * `dynamo/vllm-style` (the vLLM-DPLB selector). `seed` seeds the draws.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("dynamo/kv")!.make({}).name // => "dynamo/kv"
 * ```
 *
 * @category registry
 * @since 0.2.0
 */
export const dynamoPolicyEntries: ReadonlyArray<PolicyEntry> = [
  {
    name: "dynamo/kv",
    engine: "any",
    reference: true,
    description:
      "Dynamo KV router default selector: prefill blocks - overlap credit + decode blocks, argmin with reservoir tie-break (selector/default.rs)",
    make: (o) => erase(makeDynamoKvPolicy({ seed: o.seed }))
  },
  {
    name: "dynamo/kv-t0.5",
    engine: "any",
    reference: true,
    description: "Dynamo KV router default selector sampled by softmax at router_temperature 0.5",
    make: (o) =>
      erase(makeDynamoKvPolicy({ name: "dynamo/kv-t0.5", seed: o.seed, config: { routerTemperature: 0.5 } }))
  },
  {
    name: "dynamo/vllm-style",
    engine: "any",
    reference: true,
    description:
      "Dynamo vLLM-DPLB selector: 4*waiting + running, rotating start, first minimum (selector_vllm.rs)",
    make: () => erase(makeDynamoVllmPolicy({}))
  }
]
