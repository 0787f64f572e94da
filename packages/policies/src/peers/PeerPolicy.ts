/**
 * The reducer shape of the peer-router policies (`smg/*`, `production-stack/*`).
 *
 * @since 0.2.0
 */
import type { RankLoad } from "@loadledger/schema"
import type { Policy } from "../Policy.js"

/**
 * A `Policy` whose `observe` takes the ledger's `RankLoad` rows from `@loadledger/schema` as they
 * are (every load field optional, `unknown` rows allowed). It is assignable to `Policy<S>`.
 *
 * **When to use**: the return type of `Smg.makeSmgPolicy` and `ProductionStack.makePsPolicy`.
 *
 * @example
 * ```ts
 * import { type PeerPolicy, type Policy, Smg } from "@loadledger/policies"
 * const p: PeerPolicy<Smg.SmgPolicyState> = Smg.makeSmgPolicy("random", { seed: 3 })
 * const asPolicy: Policy<Smg.SmgPolicyState> = p
 * asPolicy.name // => "smg/random"
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type PeerPolicy<S> = Omit<Policy<S>, "observe"> & {
  readonly observe: (state: S, loads: ReadonlyArray<RankLoad>, now: number) => S
}
