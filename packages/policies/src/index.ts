/**
 * @loadledger/policies: pure DP routing policies.
 *
 * @since 0.1.0
 */

export * from "./Options.js"
export * from "./own/index.js"
export * from "./Policy.js"
export * from "./PolicyEntry.js"
export * from "./PolicyOps.js"
export * as Aibrix from "./peers/aibrix/index.js"
export * from "./peers/Draws.js"
export * as Dynamo from "./peers/dynamo/index.js"
export * as LlmD from "./peers/llm-d/index.js"
export * from "./peers/PeerPolicy.js"
export * as ProductionStack from "./peers/production-stack/index.js"
export * as Smg from "./peers/smg/index.js"
export * as VllmRouter from "./peers/vllm-router/index.js"
export * from "./RankStatus.js"
export * from "./Registry.js"
export * from "./RequestChecks.js"
export * as DpBudget from "./sglang/DpBudget.js"
export * as DpController from "./sglang/DpController.js"
export * from "./sglang/SglangPolicies.js"
export * as Trtllm from "./trtllm/index.js"
export * from "./vllm/PowerOfTwo.js"
export * from "./vllm/PrefixAffinity.js"
/**
 * The vLLM front-end client's types at the top level (`VllmLb.*` holds its functions): options,
 * one engine's `[waiting, running, kvCacheUsage]` row, a routed result, and the client state.
 *
 * @since 0.2.0
 */
export type { VllmClientOptions, VllmEngineRow, VllmLbRouted, VllmLbState } from "./vllm/VllmLb.js"
export * as VllmLb from "./vllm/VllmLb.js"
export * from "./vllm/VllmLbAliases.js"
export * from "./vllm/VllmLbPolicy.js"
export * from "./vllm/VllmLbPolicyTypes.js"
