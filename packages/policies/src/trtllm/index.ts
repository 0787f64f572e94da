/**
 * TensorRT-LLM's attention-DP routers: the batch functions (`assignDefault`,
 * `assignKvCacheAware`, `assignConversationAware`), their shapes, and `makeTrtllmPolicy`.
 *
 * @since 0.7.0
 */
export * from "./AdpRouter.js"
export * from "./ConversationAware.js"
export * from "./KvCacheAware.js"
export * from "./TrtllmPolicy.js"
