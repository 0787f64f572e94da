/**
 * NVIDIA Dynamo KV router: default cost selector, softmax sampling, vLLM-style selector, their
 * shared shapes and their `Policy` adapters, and the rank-balanced cohort admission state machine.
 *
 * @since 0.2.0
 */
export * from "./DefaultSelector.js"
export * from "./DynamoPolicy.js"
export * from "./RankBalanced.js"
export * from "./RankBalancedTypes.js"
export * from "./SoftmaxSample.js"
export * from "./Types.js"
export * from "./VllmSelector.js"
