/**
 * @loadledger/live/testing: loopback fake engines (SGLang/vLLM-like completions and load endpoints
 * with switchable faults) for router tests and soaks.
 *
 * @since 0.2.0
 */
export * from "./FakeEngine.js"
