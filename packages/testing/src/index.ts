/** @since 0.1.0 */
export const version = "0.1.0"
export * from "./Arbitraries.js"
export * from "./InflightLaw.js"
export * from "./LawExceptions.js"
export * from "./LawPredicates.js"
export * from "./PolicyLaws.js"
export * from "./RegistryLaws.js"
export * from "./SchemaLaws.js"
