/**
 * The TensorRT-LLM engine's own `SimConfig` fields (`EngineOption`): its attention-DP balance
 * strategy, `AttentionDpConfig` `enable_balance`, `timeout_iters`, `batching_wait_iters`
 * (NVIDIA/TensorRT-LLM `tensorrt_llm/llmapi/llm_args.py`; defaults 50 and 10 as upstream's).
 */
import { bad, integerAtLeast, shown } from "../../internal/configChecks.js"
import type { EngineOption } from "../Engine.js"

/**
 * TensorRT-LLM's options, in the order `checkConfig` checks them: `attentionDpEnableBalance`
 * (default false), `attentionDpTimeoutIters` (default 50) and `attentionDpBatchingWaitIters`
 * (default 10), integers >= 0; each refused on another engine away from its default (since 0.7.0
 * for the two counts, which were kept and ignored).
 *
 * @example
 * ```ts
 * import { trtllmOptions } from "./options.js"
 * trtllmOptions.map((o) => [o.field, o.defaultValue])
 * // => [["attentionDpEnableBalance", false], ["attentionDpTimeoutIters", 50], ["attentionDpBatchingWaitIters", 10]]
 * ```
 *
 * @category engines
 * @since 0.7.0
 */
export const trtllmOptions: ReadonlyArray<EngineOption> = [
  {
    field: "attentionDpEnableBalance",
    defaultValue: false,
    check: (v) => (typeof v === "boolean" ? undefined : bad("attentionDpEnableBalance", "a boolean", v)),
    elsewhere: {
      rule: "refused",
      value: false,
      message: (v, e) =>
        `attentionDpEnableBalance ${shown(v)} needs the TensorRT-LLM engine (${e.label} has no ADP balance strategy), got engine ${e.name}`
    }
  },
  {
    field: "attentionDpTimeoutIters",
    defaultValue: 50,
    check: (v) => integerAtLeast("attentionDpTimeoutIters", v, 0),
    elsewhere: {
      rule: "refused",
      value: 50,
      message: (v, e) =>
        `attentionDpTimeoutIters ${shown(v)} needs the TensorRT-LLM engine (${e.label} has no ADP balance strategy), got engine ${e.name}`
    }
  },
  {
    field: "attentionDpBatchingWaitIters",
    defaultValue: 10,
    check: (v) => integerAtLeast("attentionDpBatchingWaitIters", v, 0),
    elsewhere: {
      rule: "refused",
      value: 10,
      message: (v, e) =>
        `attentionDpBatchingWaitIters ${shown(v)} needs the TensorRT-LLM engine (${e.label} has no ADP balance strategy), got engine ${e.name}`
    }
  }
]
