/**
 * The registry entries of vllm-project/router's policies (`vllm-router/...`).
 *
 * @since 0.7.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { makeVllmRouterPolicy, type VllmRouterPolicyName } from "./Policies.js"

const entry = (name: VllmRouterPolicyName, description: string): PolicyEntry => ({
  name: `vllm-router/${name}`,
  engine: "vllm",
  reference: true,
  description,
  make: () => erase(makeVllmRouterPolicy(name))
})

/**
 * Registry entries for the Rust vllm-project/router's policies that no other entry already
 * reproduces (`vllm-router/...`, `reference: true`; see `makeVllmRouterPolicy` for how trace
 * requests reach them). Its `random`, `round_robin`, `power_of_two` and `cache_aware` descend from
 * the SGLang router, as SMG's do; they are not registered again here (not compared line by line
 * with `smg/...` yet).
 *
 * **When to use**: pick a vllm-router policy by name via `findPolicy`.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("vllm-router/rendezvous-hash")!.make({}).name // => "vllm-router/rendezvous-hash"
 * ```
 *
 * @category registry
 * @since 0.7.0
 */
export const vllmRouterPolicyEntries: ReadonlyArray<PolicyEntry> = [
  entry(
    "consistent-hash",
    "vllm-router consistent_hash: session header / body key on a FurcHash ring of 160 points per url, first healthy worker when the owner is down (consistent_hash.rs)"
  ),
  entry(
    "rendezvous-hash",
    "vllm-router rendezvous_hash: highest fbi_hash(key:url) over healthy workers, last of equal scores (rendezvous_hash.rs)"
  )
]
