/**
 * @loadledger/live: a live load ledger for TypeScript routers. Poll SGLang and vLLM workers, decode
 * with @loadledger/schema, fold into a @loadledger/policies policy, route with exact in-flight counts.
 *
 * @since 0.1.0
 */
export * from "./Imbalance.js"
export * from "./LastHeard.js"
export * from "./LiveRouter.js"
export * from "./Metrics.js"
export * from "./PolicyView.js"
export * from "./Proxy.js"
export * from "./RankStatus.js"
export * from "./Route.js"
export * from "./Router.js"
export * from "./Source.js"
export * from "./Types.js"

/**
 * The package version.
 *
 * @example
 * ```ts
 * import { version } from "@loadledger/live"
 * version // => "0.1.0"
 * ```
 *
 * @since 0.1.0
 */
export const version = "0.1.0"
