/**
 * DeepEP's modes in the step (`StepTimeConfig.deepEp`): which mode a step runs in, and the MoE
 * layer of the low-latency fixed-shape layout (deepseek-ai/DeepEP `deep_ep/buffer.py` @ dcfd9548,
 * `low_latency_dispatch`; SGLang's `--deepep-mode`, `python/sglang/srt/layers/moe/token_dispatcher/deepep.py`
 * @ 454e84da). Pure.
 */
import type { MlpSpec } from "../Model.js"
import type { DeepEpConfig } from "../StepTimeTypes.js"

/** `auto` runs decode-only steps in low-latency mode and steps with a prefill in normal mode. */
export const deepEpModeOf = (c: DeepEpConfig, anyExtend: boolean): "normal" | "low_latency" =>
  c.mode === "auto" ? (anyExtend ? "normal" : "low_latency") : c.mode

/**
 * One MoE layer on every EP rank alike: the pairs of a full buffer (`bufferTokens` over the group,
 * at the balanced share) and every local expert's weights read, through `roof(bytes, flops)`.
 */
export const lowLatencyMoeLayer = (
  mlp: Extract<MlpSpec, { readonly kind: "moe" }>,
  bufferTokens: number,
  bytesPerParam: number,
  roof: (bytes: number, flops: number) => number
): number =>
  roof(
    ((mlp.numExperts / mlp.ep) * mlp.expertParams + mlp.sharedExpertParams) * bytesPerParam,
    (2 * bufferTokens * (mlp.topK * mlp.expertParams + mlp.sharedExpertParams)) / mlp.ep
  )
