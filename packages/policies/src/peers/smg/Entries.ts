/**
 * The registry entries of the SGLang model gateway's policies (`smg/...`).
 *
 * @since 0.2.0
 */
import { erasePolicy as erase } from "../../internal/erasePolicy.js"
import type { PolicyEntry } from "../../PolicyEntry.js"
import { makeSmgPolicy } from "./Policies.js"
import type { SmgPolicyName } from "./PolicyTypes.js"

const entry = (name: SmgPolicyName, description: string): PolicyEntry => ({
  name: `smg/${name}`,
  engine: "sglang",
  reference: true,
  description,
  make: (o) => erase(makeSmgPolicy(name, { seed: o.seed }))
})

/**
 * Registry entries for the SGLang model gateway's policies (`smg/...`, `reference: true`: each
 * reproduces lightseekorg/smg 73da68ca `model_gateway/src/policies/*.rs` exactly on upstream-shaped
 * inputs; see `makeSmgPolicy` for how trace requests and load rows reach them). `seed` feeds the
 * draws of `smg/random`, `smg/power-of-two` and `smg/consistent-hashing`.
 *
 * The repository moved to smg-project/smg. `smg/prefix-hash` follows its head
 * (f8daa8835a8b4419b53125a837aaab2b3ce895c3, 2026-08-22: the absolute margin of PR #2150, the
 * routing-key hint of #2199, the load fallback for keyless requests of #2148); the behaviour
 * before is kept as `smg/prefix-hash@v1.9.0` because v1.9.0 (2026-07-29) is still the newest
 * release, so users of the released gateway run it. The other `smg/*` entries are still the
 * 73da68ca behaviour (fixtures/reference/peers/README-smg-head.md lists what the head changed in them).
 *
 * **When to use**: pick an SMG policy by name (CLI `--policies`, simulator, live router) via `findPolicy`.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * const p = findPolicy("smg/round-robin")!.make({})
 * const r = p.route(p.init(2), { requestId: "a", inputLength: 1 }, 0)
 * r._tag === "Routed" && r.rank // => 0
 * ```
 *
 * @category registry
 * @since 0.2.0
 */
export const smgPolicyEntries: ReadonlyArray<PolicyEntry> = [
  entry("round-robin", "SMG round_robin: global counter modulo the healthy workers (round_robin.rs)"),
  entry("random", "SMG random: one uniform draw over healthy workers (random.rs)"),
  entry(
    "power-of-two",
    "SMG power_of_two: two distinct draws, mean token_usage when both reported else in-flight count, first wins ties (power_of_two.rs)"
  ),
  entry(
    "least-load",
    "SMG least_load: (waiting uncached + credited tokens) / throughput + 0.15 k/(1-k), credit reset on a fresh poll (least_load.rs)"
  ),
  entry(
    "cache-aware",
    "SMG cache_aware: approximate radix tree of prompts (blocks here), match rate > 0.5 goes to the tenant, imbalance gate (cache_aware.rs)"
  ),
  entry(
    "prefix-hash",
    "SMG prefix_hash (smg-project/smg f8daa883): XXH3 of the routing key or first 256 tokens on a BLAKE3 ring, load bound max(1.25 x mean, mean + 10) (prefix_hash.rs, #2150)"
  ),
  {
    name: "smg/prefix-hash@v1.9.0",
    engine: "sglang",
    reference: true,
    description:
      "SMG prefix_hash as released in v1.9.0: XXH3 of the first 256 tokens on a BLAKE3 ring, load bound 1.25 x mean (prefix_hash.rs)",
    make: (o) => {
      const p = makeSmgPolicy("prefix-hash", { seed: o.seed, prefixHash: { version: "v1.9.0" } })
      return erase({ ...p, name: "smg/prefix-hash@v1.9.0" })
    }
  },
  entry(
    "consistent-hashing",
    "SMG consistent_hashing: routing key / session on a BLAKE3 ring, target-worker header, random without a key (consistent_hashing.rs)"
  ),
  entry(
    "dp-min-token",
    "SMG DP-rank selection: lowest (used tokens, rank), incremented by the request's cost (monitor.rs select_and_increment_lowest_dp_load)"
  )
]
