/**
 * AIBrix gateway routing: single strategies, prefix-cache, weighted mixes, and their `Policy` adapters.
 *
 * @since 0.2.0
 */

export * from "./AibrixPolicy.js"
export * from "./AibrixSloPolicy.js"
export * from "./GpuProfile.js"
export * from "./LoadRouters.js"
export * from "./Multi.js"
export * from "./Pods.js"
export * from "./PowerOfTwo.js"
export * from "./PrefixCache.js"
export * from "./SimulatorProfile.js"
export * from "./Slo.js"
export * from "./Strategies.js"
