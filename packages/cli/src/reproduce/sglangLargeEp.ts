/**
 * `loadledger reproduce sglang-deepseek-large-ep`: the SGLang team's DeepSeek-V3 deployment on
 * 96 H100s with prefill-decode disaggregation, DP attention and large-scale expert parallelism
 * (LMSYS blog, 2025-05-05), replayed as full lockstep steps of the step-time model.
 *
 * @since 0.7.0
 */
import type { ReproduceRow, ReproduceScenario } from "./Scenario.js"

const DECODE_RANKS = 72 // 9 decode nodes x 8 H100: DP 72 attention, EP 72
const PREFILL_RANKS = 32 // 4 prefill nodes x 8 H100: DP 32 attention, EP 32
const INPUT_TOKENS = 2000
const DECODE_BATCH_PER_RANK = 256
const DECODE_CONTEXT = INPUT_TOKENS + 100
const PROMPTS_PER_PREFILL_STEP = 8
/** 400 Gb/s NDR HCA per GPU: the EP all-to-all crosses nodes. */
const IB_BYTES_PER_SECOND = 50e9

/** The rows: modelled from one decode step and one prefill step of the configuration. */
const run = async (): Promise<ReadonlyArray<ReproduceRow>> => {
  const { gpus, models, stepTime } = await import("@loadledger/step-time")
  const base = models["deepseek-v3"]!
  if (base.mlp.kind !== "moe") throw new Error("deepseek-v3 preset: expected an MoE MLP")
  const gpu = { ...gpus["h100-80gb"]!, linkBandwidthBytesPerSecond: IB_BYTES_PER_SECOND }
  // DeepEP: the MoE exchange is a dispatch / combine all-to-all, not an all-reduce of every token
  const at = (ep: number) => ({ ...base, tp: 1, collective: "all-to-all" as const, mlp: { ...base.mlp, ep } })
  const decode = stepTime(
    { model: at(DECODE_RANKS), gpu },
    Array.from({ length: DECODE_RANKS }, () => ({
      decode: new Array<number>(DECODE_BATCH_PER_RANK).fill(DECODE_CONTEXT),
      extend: []
    }))
  ).stepSeconds
  const prefill = stepTime(
    { model: at(PREFILL_RANKS), gpu },
    Array.from({ length: PREFILL_RANKS }, () => ({
      decode: [],
      extend: Array.from({ length: PROMPTS_PER_PREFILL_STEP }, () => ({ prefix: 0, tokens: INPUT_TOKENS }))
    }))
  ).stepSeconds
  return [
    {
      metric: "decode output throughput per node (8 GPUs), tok/s",
      published: 22_300,
      modelled: (8 * DECODE_BATCH_PER_RANK) / decode
    },
    {
      metric: "prefill input throughput per node (8 GPUs), tok/s",
      published: 52_300,
      modelled: (8 * PROMPTS_PER_PREFILL_STEP * INPUT_TOKENS) / prefill
    },
    { metric: "decode ITL, ms (published: about 100)", published: 100, modelled: 1000 * decode }
  ]
}

/**
 * The scenario: the LMSYS blog's headline throughputs per node and its stated ITL, against one
 * modelled decode step (72 ranks x 256 decodes) and one prefill step (32 ranks x 8 prompts).
 *
 * @example
 * ```ts
 * import { sglangLargeEp } from "./sglangLargeEp.js"
 * sglangLargeEp.name // => "sglang-deepseek-large-ep"
 * const rows = await sglangLargeEp.run()
 * rows.map((r) => r.published) // => [22300, 52300, 100]
 * rows.every((r) => r.modelled > 0) // => true
 * ```
 *
 * @category reproduce
 * @since 0.7.0
 */
export const sglangLargeEp: ReproduceScenario = {
  name: "sglang-deepseek-large-ep",
  title: "SGLang DeepSeek-V3 on 96 H100s: PD disaggregation, DP attention, EP 72 decode / EP 32 prefill",
  source: {
    citation:
      "The SGLang Team, Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs, LMSYS blog, 2025-05-05",
    url: "https://lmsys.org/blog/2025-05-05-large-scale-ep/"
  },
  assumptions: [
    `decode runs ${DECODE_BATCH_PER_RANK} requests per rank at full batch (the blog gives throughput per node, not the running batch it was measured at)`,
    `every decode request sits at ${DECODE_CONTEXT} tokens of context (${INPUT_TOKENS}-token prompts; the output length is not given)`,
    `a prefill step runs ${PROMPTS_PER_PREFILL_STEP} whole ${INPUT_TOKENS}-token prompts per rank (the prefill batch is not given)`,
    "the MoE exchange is DeepEP's dispatch / combine all-to-all over one 400 Gb/s InfiniBand HCA per GPU (50 GB/s, the cross-node path); no two-batch overlap (the blog credits it with up to 35%), no EPLB imbalance, no MTP",
    "the 3 dense FFN layers are charged on the group's token count as the step model does for every MLP (SGLang runs them data-parallel, --moe-dense-tp-size 1)",
    "the step-time model's default efficiencies (not calibrated on H100 DeepSeek kernels); steady state, no arrivals, queueing or KV transfer between prefill and decode",
    "ITL: the blog's limitations section says about 100 ms; it is compared with one modelled decode step"
  ],
  run
}
