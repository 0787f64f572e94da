/**
 * @loadledger/live: a live load ledger for TypeScript routers. Poll SGLang and vLLM workers, decode
 * with @loadledger/schema, fold into a @loadledger/policies policy, route with exact in-flight counts.
 *
 * @since 0.1.0
 */
export * from "./Bookings.js"
export * from "./Diagnose.js"
export * from "./DiagnosisWindow.js"
export * from "./Gateway.js"
export * from "./Imbalance.js"
export * from "./K8sWorkers.js"
export * from "./LastHeard.js"
export * from "./LiveRouter.js"
export * from "./LiveRouterConfig.js"
export * from "./Metrics.js"
export * from "./PolicyView.js"
export * from "./PromptTokens.js"
export * from "./Proxy.js"
export * from "./ProxyEvent.js"
export * from "./RankStatus.js"
export * from "./RedisBookings.js"
export * from "./Route.js"
export * from "./Router.js"
export * from "./Serve.js"
export * from "./ServeArgs.js"
export * from "./Source.js"
export * from "./Types.js"
export * from "./WorkerSet.js"
export * from "./WorkerWatch.js"

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
