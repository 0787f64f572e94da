/**
 * What an SMG policy reducer is made from: its registry name (`SmgPolicyName`), its options
 * (`SmgPolicyOptions`) and its state (`SmgPolicyState`).
 *
 * A leaf below `Policies.ts` (which builds the reducers) and `internal/specs.ts` (each policy's
 * core), so the two do not import each other (issue 29). Re-exported from the `Smg` namespace.
 *
 * @since 0.2.0
 */
import type { Charges } from "../internal/charges.js"
import type { SmgCacheAwareConfig } from "./CacheAware.js"
import type { SmgLeastLoadConfig } from "./LeastLoad.js"
import type { SmgPrefixHashConfig } from "./PrefixHash.js"
import type { SmgWorker } from "./Types.js"

/**
 * The SMG policies the registry offers (`smg/<name>`).
 *
 * @category smg
 * @since 0.2.0
 */
export type SmgPolicyName =
  | "round-robin"
  | "random"
  | "power-of-two"
  | "least-load"
  | "cache-aware"
  | "prefix-hash"
  | "consistent-hashing"
  | "dp-min-token"

/**
 * Options of {@link makeSmgPolicy}: `seed` (uint32) for the draws of `random`, `power-of-two`
 * and `consistent-hashing`'s fallback; `blockTokens` (512, Mooncake) turns `prefix-hash`'s
 * `prefixTokenCount` into blocks; the per-policy tunables of the cores.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgPolicyOptions {
  readonly seed?: number | undefined
  readonly blockTokens?: number | undefined
  readonly leastLoad?: SmgLeastLoadConfig | undefined
  readonly cacheAware?: SmgCacheAwareConfig | undefined
  readonly prefixHash?: SmgPrefixHashConfig | undefined
}

/**
 * State of an SMG policy reducer: the workers (rank `i` is `rank-i`, `load` = requests routed here
 * and not yet finished, `healthy` from `setStatus`), which rank each in-flight request was charged
 * to, the draw seed and the core's own state.
 *
 * @category smg
 * @since 0.2.0
 */
export interface SmgPolicyState {
  readonly workers: ReadonlyArray<SmgWorker>
  readonly charges: Charges
  readonly seed: number
  readonly core: unknown
  /** `dp-min-token` only: round-robin cursor for the engine's own choice when no rank has a load. */
  readonly fallbackCursor: number
}
