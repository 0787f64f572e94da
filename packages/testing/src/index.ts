/**
 * @loadledger/testing: fast-check arbitraries for every schema and the reusable laws (schema laws,
 * policy laws over the registry, the in-flight law) that loadledger's own tests run.
 *
 * @since 0.1.0
 */

/**
 * The package version.
 *
 * @example
 * ```ts
 * import { version } from "@loadledger/testing"
 * version // => "0.1.0"
 * ```
 *
 * @since 0.1.0
 */
export const version = "0.1.0"
export * from "./Arbitraries.js"
export * from "./CarryLaw.js"
export * from "./FairnessLaws.js"
export * from "./InflightLaw.js"
export * from "./LawExceptions.js"
export * from "./LawExceptionsFairnessPeers.js"
export * from "./LawExceptionsPeers.js"
export * from "./LawExceptionsTrtllm.js"
export * from "./LawExceptionsVllm.js"
export * from "./LawPredicates.js"
export * from "./LawTypes.js"
export * from "./MarkLaw.js"
export * from "./PolicyLaws.js"
export * from "./PrefixLaw.js"
export * from "./RegistryLaws.js"
export * from "./RouterLaws.js"
export * from "./SchemaLaws.js"
export * from "./SpeedLaw.js"
export * from "./StateLaws.js"
