/**
 * vLLM production-stack's router policies: round robin, session affinity, prefix-aware, load-aware
 * (PR #1035), the QPS routing they fall back on, and their `Policy` adapters.
 *
 * @since 0.2.0
 */
export * from "./LoadAware.js"
export * from "./LoadAwareBeta.js"
export * from "./Policies.js"
export * from "./PrefixAware.js"
export * from "./Qps.js"
export * from "./RoundRobin.js"
export * from "./Session.js"
