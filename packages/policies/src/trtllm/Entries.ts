/**
 * The registry entries of the TensorRT-LLM attention-DP routers (one line per registered name).
 *
 * @since 0.7.0
 */
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { makeTrtllmPolicy } from "./TrtllmPolicy.js"

/**
 * Registry entries for TensorRT-LLM's `ADPRouter`s (`reference: true`): `trtllm/default`,
 * `trtllm/kv-cache-aware`, `trtllm/conversation-affinity`. `maxRunningRequests` is
 * `max_num_active_requests` when given (default 2048).
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("trtllm/default")!.make({}).name // => "trtllm/default"
 * ```
 *
 * @category registry
 * @since 0.7.0
 */
export const trtllmPolicyEntries: ReadonlyArray<PolicyEntry> = [
  {
    name: "trtllm/default",
    engine: "trtllm",
    reference: true,
    description:
      "TensorRT-LLM DefaultADPRouter: min-heap on (active tokens, requests), per-rank fair-share cap (adp_router.py)",
    make: (o) => erase(makeTrtllmPolicy("default", { maxNumActiveRequests: o.maxRunningRequests }))
  },
  {
    name: "trtllm/kv-cache-aware",
    engine: "trtllm",
    reference: true,
    description:
      "TensorRT-LLM KVCacheAwareADPRouter: uncached tokens + weighted normalised load, 2x fair-share cap",
    make: (o) => erase(makeTrtllmPolicy("kv-cache-aware", { maxNumActiveRequests: o.maxRunningRequests }))
  },
  {
    name: "trtllm/conversation-affinity",
    engine: "trtllm",
    reference: true,
    description:
      "TensorRT-LLM ConversationAwareADPRouter: conversation (session) pinned to its first rank, round-robin",
    make: (o) =>
      erase(makeTrtllmPolicy("conversation-affinity", { maxNumActiveRequests: o.maxRunningRequests }))
  }
]
