/**
 * The registry entries of vLLM production-stack's router policies (`production-stack/...`).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { makePsPolicy, type PsPolicyName } from "./Policies.js"

const entry = (name: PsPolicyName, description: string): PolicyEntry => ({
  name: `production-stack/${name}`,
  engine: "vllm",
  reference: true,
  description,
  make: (o) => erase(makePsPolicy(name, { seed: o.seed }))
})

/**
 * Registry entries for vLLM production-stack's router policies (`production-stack/...`,
 * `reference: true`: vllm-project/production-stack a6c01db0 `routing_logic.py`; see `makePsPolicy`
 * for how trace requests reach them), and `loadaware` (merged after that commit in PR #1035, read from
 * `routing_logic.py` and `src/tests/test_loadaware_router.py` at 0aed3a00; its LMCache lookup is a
 * router-side block index, see `makePsPolicy`).
 *
 * **When to use**: pick a production-stack policy by name via `findPolicy`.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("production-stack/session")!.make({}).name // => "production-stack/session"
 * ```
 *
 * @category registry
 * @since 0.2.0
 */
export const productionStackPolicyEntries: ReadonlyArray<PolicyEntry> = [
  entry(
    "roundrobin",
    "production-stack RoundRobinRouter: one cursor per sorted endpoint set (routing_logic.py)"
  ),
  entry(
    "session",
    "production-stack SessionRouter: session header on a uhashring MD5 ring, else lowest router-side QPS (routing_logic.py)"
  ),
  entry(
    "prefixaware",
    "production-stack PrefixAwareRouter: XXH64 trie of 128-char chunks (blocks here), random among longest matches (routing_logic.py, hashtrie.py)"
  ),
  entry(
    "loadaware",
    "production-stack LoadAwareRouter (#1035): argmax of cached fraction - beta (1.0) x (inflight - mean)/max(1, mean); cache from a router-side block index in place of LMCache's controller (routing_logic.py)"
  )
]
