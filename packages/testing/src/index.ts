/** @since 0.1.0 */
export const version = "0.1.0"
export * from "./Arbitraries.js"
export * from "./InflightLaw.js"
export * from "./PolicyLaws.js"
export * from "./SchemaLaws.js"
export * from "./LawExceptions.js"
export * from "./RegistryLaws.js"
