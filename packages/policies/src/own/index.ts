/**
 * loadledger's own policies: each a configuration of named terms (`ownPolicyConfigs`, `policyFromConfig`).
 *
 * @since 0.1.0
 */

export * from "./BootstrapRooms.js"
export * from "./CacheAffinity.js"
/** The registered configurations and `policyFromConfig` (not `buildPolicy`: the registry's, unchecked). */
export { defaultPolicyConfig, ownPolicyConfigs, policyFromConfig } from "./Configs.js"
export * from "./Entries.js"
export * from "./PolicyConfig.js"
export * from "./PowerOfChoices.js"
export * from "./RankView.js"
export * from "./Scored.js"
export * from "./ScoredPolicies.js"
/**
 * Ready-made scorers for `makeScored` / `makePowerOfChoices` (`Scorers.tokens`, `Scorers.perRank`, ...).
 *
 * @since 0.4.0
 */
export * as Scorers from "./Scorers.js"
/** The term names a configuration may give, each to its `Scorer`. */
export { ledgerTerms } from "./Scorers.js"
export * from "./ScoreView.js"
export * from "./StepCost.js"
export * from "./StepTimeAware.js"
export * from "./StepTimeTypes.js"
export * from "./WithKvAdmission.js"
export * from "./WithSpeed.js"
export * from "./WithStaleness.js"
