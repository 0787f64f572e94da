/**
 * Registry entries for loadledger's own policies (`reference: false`), one per registered name,
 * each built from its configuration in `Configs.ts` through the one typed cast `erasePolicy`.
 *
 * @since 0.1.0
 */
import { checkedEntries } from "../internal/checkedEntries.js"
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { buildPolicy, ownPolicyConfigs } from "./Configs.js"

/** Each registered name's one-line description (the engine is `"any"` unless the name starts `vllm-`). */
const descriptions: Readonly<Record<string, string>> = {
  "ledger-balanced":
    "In-flight-charging ledger on (tokens, requests): charges survive snapshot overwrites until a snapshot stamped after the route; stale/unknown ranks never look idle; KV-pressure guard",
  "ledger-balanced-requests":
    "ledger-balanced comparing (requests, tokens): the request-count view vLLM's balancer uses",
  "cache-affinity":
    "Prefix-cache and session affinity with load gates on engine-reported counts and KV saturation, (load, processed, index) ties, KV-driven session migration with hysteresis",
  "uncached-tokens":
    "Lowest tokens + prompt tokens still to prefill on that rank (router-side prefix index), in-flight charges x front ends, KV-feasible, rotating ties",
  "step-time-aware":
    "Least predicted prefill wait + own uncached prefill + decode cost (+ running-slot wait at the engines' cap, - a home credit with several front ends), in seconds of lockstep step time (the engines' step cost model, default GLM-5.3/H200), per-rank prefix-cache estimate, KV-feasible",
  "ledger-scored":
    "Weighted normalised scorers on the in-flight ledger: tokens (1) + uncached prompt tokens (0.5), ties by requests, KV-pressure gate, KV-feasible, rotating ties",
  "power-of-two-ledger":
    "Power of two choices on the in-flight ledger: the rotating cursor's rank and 2 seeded draws, lowest tokens then requests; O(1) per route (batched charges)",
  "speed-aware":
    "step-time-aware with each rank's predicted seconds (prefill wait, own prefill, decode, slot wait) divided by its learned speed (utilization against tokens held, smoothed, floored at 0.3): a request goes where it finishes soonest at the ranks' real speeds",
  "vllm-kv-pressure+kv-admission":
    "vLLM's DP balancer (upstream) that never picks a rank whose free KV cannot hold the prompt while another's can",
  "vllm-kv-pressure+staleness+kv-admission":
    "vLLM's DP balancer given speculative charges x front ends that survive coordinator broadcasts until a snapshot covers them, an in-flight floor, and KV admission"
}

/**
 * Registry entries for loadledger's own policies (`reference: false`), each built from its
 * configuration (`ownPolicyConfigs`): `ledger-balanced`, `ledger-balanced-requests`,
 * `cache-affinity`, `uncached-tokens`, `step-time-aware`, `ledger-scored`, `power-of-two-ledger`,
 * and vLLM's balancer behind the KV-admission (and staleness) wrappers. `clientCount` /
 * `clientIndex` describe router replicas; `seed` feeds `power-of-two-ledger`'s draws (the others
 * have no randomness: ties break by a rotating index); `maxRunningRequests` and `stepCost` are read
 * by `step-time-aware`. Each `make` refuses bad options as every registered entry does
 * (`checkPolicyOptions`: its policy answers every `route` with the error).
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * const p = findPolicy("ledger-balanced")!.make({ clientCount: 2, clientIndex: 1 })
 * p.name // => "ledger-balanced"
 * findPolicy("vllm-kv-pressure+staleness+kv-admission")!.engine // => "vllm"
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const ownPolicyEntries: ReadonlyArray<PolicyEntry> = checkedEntries(
  Object.entries(descriptions).map(([name, description]) => ({
    name,
    engine: name.startsWith("vllm-") ? "vllm" : "any",
    reference: false,
    description,
    make: (o) => erase(buildPolicy(ownPolicyConfigs[name]!, o))
  }))
)
