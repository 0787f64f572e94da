/**
 * @loadledger/policies: pure DP routing policies.
 *
 * @since 0.1.0
 */
export * from "./Policy.js"
export * from "./Registry.js"
