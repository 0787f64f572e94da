/**
 * loadledger's own policies: `ledger-balanced` and `cache-affinity`.
 *
 * @since 0.1.0
 */

export * from "./BootstrapRooms.js"
export * from "./CacheAffinity.js"
export * from "./Entries.js"
export * from "./LedgerBalanced.js"
export * from "./PowerOfChoices.js"
export * from "./RankView.js"
export * from "./Scored.js"
/**
 * Ready-made scorers for `makeScored` / `makePowerOfChoices` (`Scorers.tokens`, `Scorers.perRank`, ...).
 *
 * @since 0.4.0
 */
export * as Scorers from "./Scorers.js"
export * from "./ScoreView.js"
export * from "./StepCost.js"
export * from "./StepTimeAware.js"
export * from "./UncachedTokens.js"
export * from "./WithKvAdmission.js"
export * from "./WithStaleness.js"
