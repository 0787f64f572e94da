/**
 * vllm-project/router's policies: the FurcHash-based `fbi_hash`, the routing key it hashes, and
 * the `consistent_hash` / `rendezvous_hash` `Policy` adapters, and `power_of_two` (its core with explicit draws and its
 * `Policy` adapter).
 *
 * @since 0.7.0
 */
export * from "./FbiHash.js"
export * from "./HashKey.js"
export * from "./Policies.js"
export * from "./PowerOfTwo.js"
export * from "./PowerOfTwoPolicy.js"
