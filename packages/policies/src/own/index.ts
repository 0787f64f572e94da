/**
 * loadledger's own policies: `ledger-balanced` and `cache-affinity`.
 *
 * @since 0.1.0
 */

export * from "./BootstrapRooms.js"
export * from "./CacheAffinity.js"
export * from "./Entries.js"
export * from "./LedgerBalanced.js"
export * from "./RankView.js"
export * from "./StepCost.js"
export * from "./StepTimeAware.js"
export * from "./UncachedTokens.js"
