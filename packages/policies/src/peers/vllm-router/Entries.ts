/**
 * The registry entries of vllm-project/router's policies (`vllm-router/...`).
 *
 * @since 0.7.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { makeVllmRouterPolicy, type VllmRouterPolicyName } from "./Policies.js"
import { makeVllmRouterPowerOfTwo } from "./PowerOfTwoPolicy.js"

const entry = (name: VllmRouterPolicyName, description: string): PolicyEntry => ({
  name: `vllm-router/${name}`,
  engine: "vllm",
  reference: true,
  description,
  make: () => erase(makeVllmRouterPolicy(name))
})

/**
 * Registry entries for the Rust vllm-project/router's policies that no other entry already
 * reproduces (`vllm-router/...`, `reference: true`; see `makeVllmRouterPolicy` and
 * `makeVllmRouterPowerOfTwo` for how trace requests reach them). `power_of_two` is not SMG's (a
 * rejection-loop second pick, `cached + local` request counts); `random`, `round_robin` and
 * `cache_aware` are not registered (fixtures/reference/peers/README-vllm-router.md says why).
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
  ),
  {
    name: "vllm-router/power-of-two",
    engine: "vllm",
    reference: true,
    description:
      "vllm-router power_of_two: two distinct random healthy workers, lower cached (running + waiting) + router in-flight count wins, first on ties (power_of_two.rs)",
    make: (o) => erase(makeVllmRouterPowerOfTwo({ seed: o.seed }))
  }
]
