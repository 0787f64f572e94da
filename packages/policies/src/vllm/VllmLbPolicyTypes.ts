/**
 * The options and state of vLLM's balancer as a `Policy` (`makeVllmLb`, `VllmLbPolicy.ts`): a leaf
 * module below the policy and its internal route and observe (`internal/lbPolicy.ts`).
 *
 * @since 0.1.0
 */
import type { PolicyError, RankLoad } from "../Policy.js"
import type { VllmClientOptions, VllmLbState } from "./VllmLbTypes.js"

/**
 * Options of `makeVllmLb`. `clientCount` / `clientIndex` are upstream's (API-server processes and
 * this one's index). The rest are **beyond upstream** and off by default:
 * - `staleAfterSeconds`: a rank whose last snapshot (`RankLoad.timestamp`) is older than this at
 *   routing time is listed in `explanation.stale`; when every observed rank is stale the
 *   explanation says `coordinatorFrozen: true`. Routing itself is unchanged.
 * - `kvSaturationGuard`: never choose a rank with `kvCacheUsage >= saturatedAt` (0.99) and waiting
 *   requests while some healthy rank has `kvCacheUsage < roomBelow` (0.9); and, when rows carry
 *   the KV capacity (`kvAvailableTokens`, or `tokenCapacity` / `maxTotalNumTokens` with used tokens
 *   or `kvCacheUsage`), never a rank whose free KV tokens are fewer than the prompt's `inputLength`
 *   while some healthy rank's are not (a size check, not a usage threshold; issue 30).
 * - `unknownLosesTies`: on a tie for the least score, a rank whose load is better known wins (its
 *   counts known before unknown ones, then its KV usage known before missing), then the scan order:
 *   unknown is never attractive. Upstream always has every field, so it never meets the case; off,
 *   a tie goes to the scan order whatever is known (loadledger's `vllm-kv-pressure`).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbPolicyOptions extends VllmClientOptions {
  readonly staleAfterSeconds?: number | undefined
  readonly kvSaturationGuard?:
    | boolean
    | { readonly saturatedAt?: number | undefined; readonly roomBelow?: number | undefined }
    | undefined
  readonly unknownLosesTies?: boolean | undefined
}

/**
 * State of the `makeVllmLb` policy: the upstream front-end state `lb`, plus per-rank snapshot
 * timestamps (`snapshotAt`, seconds, absent until a rank is observed), health, and the dpRanks of
 * the last `observe` that were out of range (`rejectedRanks`, never silently dropped).
 *
 * @category vllm
 * @since 0.1.0
 */
export interface VllmLbPolicyState {
  readonly lb: VllmLbState
  readonly snapshotAt: ReadonlyArray<number | undefined>
  readonly healthy: ReadonlyArray<boolean>
  /** Ranks marked unhealthy (derived from `healthy`, kept so routing does not rebuild it). */
  readonly unhealthy: ReadonlyArray<number>
  /** Ranks whose last row has no `kvCacheUsage` (derived at `observe`). */
  readonly kvMissing: ReadonlyArray<number>
  /**
   * Ranks whose last row was `unknown` or lacked `numWaitingReqs` / `numRunningReqs`: their row in
   * `lb.lbEngines` holds what they reported and the busiest known values for the rest (see
   * `makeVllmLb`). Absent when none.
   */
  readonly loadUnknown?: ReadonlyArray<number> | undefined
  /** The last rows of the `loadUnknown` ranks, as received (in `loadUnknown` order). */
  readonly unknownRows?: ReadonlyArray<RankLoad> | undefined
  readonly rejectedRanks: ReadonlyArray<number>
  readonly initError?: PolicyError | undefined
  /** With the KV guard: each rank's last known free KV tokens (absent while no row carried a capacity). */
  readonly freeKvTokens?: ReadonlyArray<number | undefined> | undefined
}
