/**
 * The SGLang model gateway (SMG) policies: their upstream cores (round robin, random, power of two,
 * least load, cache aware, prefix hash, consistent hashing, DP min token), the shared types, and
 * their `Policy` adapters.
 *
 * @since 0.2.0
 */
export * from "./CacheAware.js"
export * from "./ConsistentHashing.js"
export * from "./DpMinToken.js"
export * from "./LeastLoad.js"
export * from "./Policies.js"
export * from "./PolicyTypes.js"
export * from "./PowerOfTwo.js"
export * from "./PrefixHash.js"
export * from "./Random.js"
export * from "./RoundRobin.js"
export * from "./Types.js"
