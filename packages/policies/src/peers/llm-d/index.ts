/**
 * llm-d Router (inference scheduler): scorers, pickers, the utilization detector, the approximate
 * prefix producer, profiles, and their `Policy` adapters.
 *
 * @since 0.2.0
 */
export * from "./Endpoint.js"
export * from "./LlmdPolicy.js"
export * from "./Pickers.js"
export * from "./PrefixProducer.js"
export * from "./Profile.js"
export * from "./Scorers.js"
export * from "./UtilizationDetector.js"
