/**
 * GPU presets: HBM bandwidth, peak tensor FLOPs and NVLink bandwidth, the three numbers the
 * roofline in {@link stepTime} needs.
 *
 * @since 0.1.0
 */

/**
 * One accelerator as the step-time roofline sees it.
 *
 * **When to use**: pick a preset from {@link gpus} or build your own for a part not listed.
 *
 * Units: bandwidths in bytes per second (decimal: 1 TB/s = 1e12), FLOPs per second for dense
 * (non-sparse) tensor math, `hbmBytes` in bytes. `linkBandwidthBytesPerSecond` is the per-GPU,
 * per-direction NVLink bandwidth (half the marketing "bidirectional" figure).
 *
 * @example
 * ```ts
 * import { gpus } from "@loadledger/step-time"
 * gpus["h200"]!.hbmBandwidthBytesPerSecond // => 4.8e12
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface GpuSpec {
  readonly name: string
  readonly hbmBandwidthBytesPerSecond: number
  /** Dense BF16/FP16 tensor-core peak. */
  readonly peakFlopsPerSecond: number
  /** Dense FP8 tensor-core peak, used for GEMMs over 1-byte weights; defaults to 2x BF16. */
  readonly peakFp8FlopsPerSecond?: number | undefined
  readonly linkBandwidthBytesPerSecond: number
  readonly hbmBytes: number
}

/**
 * GPU presets, keyed by the names the splitwise profiles use (`a100-80gb`, `h100-80gb`,
 * `h100-80gb-pcap`) plus `h200`, `b200` and `gb200`.
 *
 * Sources (vendor datasheets, SXM parts, dense tensor-core peaks):
 * - `a100-80gb`: NVIDIA A100 datasheet: HBM2e 2,039 GB/s, BF16 312 TFLOPS, NVLink 3 600 GB/s.
 * - `h100-80gb`: NVIDIA H100 datasheet (SXM5): HBM3 3.35 TB/s, BF16 989 TFLOPS, FP8 1,979 TFLOPS,
 *   NVLink 4 900 GB/s.
 * - `h100-80gb-pcap`: the power-capped H100 of the splitwise profiles
 *   (github.com/Mutinifni/splitwise-sim, `data/perf_model.csv`); same datasheet numbers, the
 *   cap shows up as a lower fitted efficiency in {@link fit}.
 * - `h200`: NVIDIA H200 datasheet: HBM3e 4.8 TB/s, 141 GB, same compute and NVLink as H100.
 * - `a40`: NVIDIA A40 datasheet: GDDR6 696 GB/s, FP16/BF16 tensor 149.7 TFLOPS (no FP8), 48 GB,
 *   NVLink bridge 112.5 GB/s (a Vidur profile GPU).
 * - `b200`: NVIDIA HGX B200 datasheet: HBM3e 8 TB/s, 180 GB, BF16 2.25 PFLOPS, FP8 4.5 PFLOPS,
 *   NVLink 5 1.8 TB/s.
 * - `gb200` (since 0.7.0): one Blackwell GPU of an NVIDIA GB200 NVL72, the rack's datasheet figures
 *   (https://www.nvidia.com/en-us/data-center/gb200-nvl72/, "Specifications"; figures "with
 *   sparsity" except memory) divided by 72: HBM3e up to 13.4 TB and 576 TB/s -> 186 GB and 8 TB/s;
 *   FP16/BF16 Tensor Core 360 PFLOPS and FP8/FP6 720 PFLOPS with sparsity -> 2.5 and 5 PFLOPS
 *   dense per GPU; fifth-generation NVLink 130 TB/s -> 1.8 TB/s per GPU (900 GB/s one way).
 *   Checked on 2026-12-07 against copies of those figures (nvidia.com itself was not in the
 *   reference store): the rack totals as NVIDIA states them (13.4 TB, 720 PFLOPS FP8, 130 TB/s:
 *   https://aiwiki.ai/wiki/nvidia_gb200_nvl72; 576 TB/s:
 *   https://introl.com/blog/gb200-nvl72-deployment-72-gpu-liquid-cooled), the per-GPU dense
 *   peaks of the GB200 part at 1,200 W from NVIDIA's Blackwell architecture technical brief
 *   (BF16 2,500, FP8 5,000 TFLOPS: https://glennklockwood.com/garden/processors/B200) and the
 *   186 GB a GB200 reports in MLPerf Inference system descriptions
 *   (https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/closed/Crusoe/systems/GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json).
 *   Every figure agreed; none changed. One third-party table gives lower per-GPU figures (FP8
 *   4.5 PFLOPS, BF16 2.25, 7.7 TB/s: https://verda.com/blog/gb300-nvl72-architecture), the B200
 *   (HGX, 1,000 W) ones, not the rack's. (NVFP4, 1,440 PFLOPS sparse per rack = 10 PFLOPS dense
 *   per GPU, is not modelled: the roofline has no FP4 peak.)
 *
 * NVLink figures are bidirectional in the datasheets; the presets store half (one direction).
 *
 * @example
 * ```ts
 * import { gpus } from "@loadledger/step-time"
 * Object.keys(gpus).sort().join(",") // => "a100-80gb,a40,b200,gb200,h100-80gb,h100-80gb-pcap,h200"
 * ```
 *
 * @category presets
 * @since 0.1.0
 */
export const gpus: Record<string, GpuSpec> = {
  "a100-80gb": {
    name: "a100-80gb",
    hbmBandwidthBytesPerSecond: 2.039e12,
    peakFlopsPerSecond: 312e12,
    peakFp8FlopsPerSecond: 312e12,
    linkBandwidthBytesPerSecond: 300e9,
    hbmBytes: 80e9
  },
  a40: {
    name: "a40",
    hbmBandwidthBytesPerSecond: 696e9,
    peakFlopsPerSecond: 149.7e12,
    peakFp8FlopsPerSecond: 149.7e12,
    linkBandwidthBytesPerSecond: 56.25e9,
    hbmBytes: 48e9
  },
  "h100-80gb": {
    name: "h100-80gb",
    hbmBandwidthBytesPerSecond: 3.35e12,
    peakFlopsPerSecond: 989e12,
    peakFp8FlopsPerSecond: 1979e12,
    linkBandwidthBytesPerSecond: 450e9,
    hbmBytes: 80e9
  },
  "h100-80gb-pcap": {
    name: "h100-80gb-pcap",
    hbmBandwidthBytesPerSecond: 3.35e12,
    peakFlopsPerSecond: 989e12,
    peakFp8FlopsPerSecond: 1979e12,
    linkBandwidthBytesPerSecond: 450e9,
    hbmBytes: 80e9
  },
  h200: {
    name: "h200",
    hbmBandwidthBytesPerSecond: 4.8e12,
    peakFlopsPerSecond: 989e12,
    peakFp8FlopsPerSecond: 1979e12,
    linkBandwidthBytesPerSecond: 450e9,
    hbmBytes: 141e9
  },
  b200: {
    name: "b200",
    hbmBandwidthBytesPerSecond: 8e12,
    peakFlopsPerSecond: 2250e12,
    peakFp8FlopsPerSecond: 4500e12,
    linkBandwidthBytesPerSecond: 900e9,
    hbmBytes: 180e9
  },
  gb200: {
    name: "gb200",
    hbmBandwidthBytesPerSecond: 8e12,
    peakFlopsPerSecond: 2500e12,
    peakFp8FlopsPerSecond: 5000e12,
    linkBandwidthBytesPerSecond: 900e9,
    hbmBytes: 186e9
  }
}
