/**
 * Registry entries for loadledger's own policies (`reference: false`), one per registered name,
 * each built through the one typed cast `erasePolicy`; the composed configurations are in
 * `ComposedEntries.ts`.
 *
 * @since 0.1.0
 */
import { checkedEntries } from "../internal/checkedEntries.js"
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { makeCacheAffinity } from "./CacheAffinity.js"
import { composedPolicyEntries } from "./ComposedEntries.js"
import { makeLedgerBalanced } from "./LedgerBalanced.js"
import { makeStepTimeAware } from "./StepTimeAware.js"
import { makeUncachedTokens } from "./UncachedTokens.js"

/**
 * Registry entries for loadledger's own policies (`reference: false`): `ledger-balanced`,
 * `ledger-balanced-requests`, `cache-affinity`, `uncached-tokens` and `step-time-aware`. `clientCount` / `clientIndex` describe router
 * replicas; `seed` is unused (these policies have no randomness: ties break by index). Each
 * `make` refuses bad options as every registered entry does (`checkPolicyOptions`: its policy
 * answers every `route` with the error).
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * const p = findPolicy("ledger-balanced")!.make({ clientCount: 2, clientIndex: 1 })
 * p.name // => "ledger-balanced"
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const ownPolicyEntries: ReadonlyArray<PolicyEntry> = checkedEntries([
  {
    name: "ledger-balanced",
    engine: "any",
    reference: false,
    description:
      "In-flight-charging ledger on (tokens, requests): charges survive snapshot overwrites until a snapshot stamped after the route; stale/unknown ranks never look idle; KV-pressure guard",
    make: (o) => erase(makeLedgerBalanced({ clientCount: o.clientCount, clientIndex: o.clientIndex }))
  },
  {
    name: "ledger-balanced-requests",
    engine: "any",
    reference: false,
    description: "ledger-balanced comparing (requests, tokens): the request-count view vLLM's balancer uses",
    make: (o) =>
      erase(
        makeLedgerBalanced({ metric: "requests", clientCount: o.clientCount, clientIndex: o.clientIndex })
      )
  },
  {
    name: "cache-affinity",
    engine: "any",
    reference: false,
    description:
      "Prefix-cache and session affinity with load gates on engine-reported counts and KV saturation, (load, processed, index) ties, KV-driven session migration with hysteresis",
    make: () => erase(makeCacheAffinity())
  },
  {
    name: "uncached-tokens",
    engine: "any",
    reference: false,
    description:
      "Lowest tokens + prompt tokens still to prefill on that rank (router-side prefix index), in-flight charges x front ends, KV-feasible, rotating ties",
    make: (o) => erase(makeUncachedTokens({ clientCount: o.clientCount, clientIndex: o.clientIndex }))
  },
  {
    name: "step-time-aware",
    engine: "any",
    reference: false,
    description:
      "Least predicted prefill wait + own uncached prefill + decode cost (+ running-slot wait at the engines' cap, - a home credit with several front ends), in seconds of lockstep step time (the engines' step cost model, default GLM-5.3/H200), per-rank prefix-cache estimate, KV-feasible",
    make: (o) =>
      erase(
        makeStepTimeAware({
          clientCount: o.clientCount,
          clientIndex: o.clientIndex,
          maxRunningRequests: o.maxRunningRequests,
          cost: o.stepCost
        })
      )
  },
  ...composedPolicyEntries
])
