/**
 * NVIDIA Dynamo KV router: default cost selector, softmax sampling, vLLM-style selector, and their
 * `Policy` adapters.
 *
 * @since 0.2.0
 */
export * from "./DefaultSelector.js"
export * from "./DynamoPolicy.js"
export * from "./SoftmaxSample.js"
export * from "./VllmSelector.js"
