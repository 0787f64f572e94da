/**
 * Vidur profile files: GPU names, reader options, what a file's path says, and the network
 * (collective) profiles.
 *
 * @since 0.2.0
 */
import * as Result from "effect/Result"
import type { CalibrationError, CollectiveSample } from "./Calibration.js"
import type { GpuSpec } from "./Hardware.js"
import { err, number, read, resolveGpu } from "./internal/vidurCsv.js"

/**
 * Options of the Vidur readers: `gpu` (a {@link GpuSpec} or preset name), `statistic` (which of
 * Vidur's `min/max/mean/median/std` columns to read; default `median`, what Vidur's own predictor
 * fits), `model` (name to give the rows, e.g. the preset the model is known by; default from the
 * file's dimensions), `decodeTokens` (layer rows of at most this many tokens are labelled
 * `decode`, one token per request; larger ones `prefill`; default 128).
 *
 * @category calibration
 * @since 0.2.0
 */
export interface VidurOptions {
  readonly gpu: GpuSpec | string
  readonly statistic?: "min" | "max" | "mean" | "median" | undefined
  readonly model?: string | undefined
  readonly decodeTokens?: number | undefined
}

/**
 * Collective samples from a Vidur network profile (`all_reduce.csv` or `send_recv.csv`): one
 * {@link CollectiveSample} per row whose GPUs all sit in one node (`num_workers ==
 * devices_per_node`; set `interNode: true` to keep the others), `bytes` = `size`, `gpus` =
 * `num_workers`, time = `time_stats.<collective>.<statistic>` in ms to seconds.
 *
 * **When to use**: to calibrate `linkEfficiency` and `collectiveLatencySeconds` on measured NCCL
 * collectives. Errors as in {@link vidurMlpSamples}; an unknown `collective` value names that
 * column.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { vidurCollectiveSamples } from "@loadledger/step-time"
 * const csv = ",time_stats.all_reduce.median,rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n" +
 *   "0,0.05,0,8,1048576,all_reduce,8,8\n1,0.05,0,2,2048,all_reduce,1,8\n"
 * const r = vidurCollectiveSamples(csv, { gpu: "a100_dgx" })
 * Result.isSuccess(r) && r.success.map((s) => `${s.kind} ${s.gpus} ${s.bytes}`).join(";") // => "all-reduce 8 1048576"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurCollectiveSamples = (
  csvText: string,
  options: VidurOptions & { readonly interNode?: boolean | undefined }
): Result.Result<ReadonlyArray<CollectiveSample>, CalibrationError> => {
  const stat = options.statistic ?? "median"
  const gpu = resolveGpu(options.gpu)
  if (Result.isFailure(gpu)) return Result.fail(gpu.failure)
  const t = read(csvText, ["size", "num_workers", "devices_per_node", "collective"])
  if (Result.isFailure(t)) return Result.fail(t.failure)
  const out: Array<CollectiveSample> = []
  for (let i = 0; i < t.success.records.length; i++) {
    const rec = t.success.records[i]!
    const row = i + 2
    const name = rec["collective"]
    const kind = name === "all_reduce" ? "all-reduce" : name === "send_recv" ? "send-recv" : undefined
    if (kind === undefined) return Result.fail(err("collective", `unknown collective ${name}`, row))
    const timeCol = `time_stats.${name}.${stat}`
    if (!t.success.header.includes(timeCol)) return Result.fail(err(timeCol, `missing column ${timeCol}`, 1))
    const v: Record<string, number> = {}
    for (const c of ["size", "num_workers", "devices_per_node", timeCol]) {
      const n = number(rec, c, row)
      if (Result.isFailure(n)) return Result.fail(n.failure)
      v[c] = n.success
    }
    if (options.interNode !== true && v["num_workers"] !== v["devices_per_node"]) continue
    out.push({
      kind,
      gpu: gpu.success,
      gpus: v["num_workers"]!,
      bytes: v["size"]!,
      group: gpu.success.name,
      source: "vidur",
      configuration: `${name} ${v["num_workers"]} gpus ${v["size"]} B`,
      measuredSeconds: v[timeCol]! / 1000
    })
  }
  return Result.succeed(out)
}

const modelNames: Record<string, string> = {
  "meta-llama/Llama-2-70b-hf": "llama2-70b",
  "meta-llama/Llama-2-7b-hf": "llama2-7b",
  "meta-llama/Meta-Llama-3-70B": "llama3-70b",
  "meta-llama/Meta-Llama-3-8B": "llama3-8b",
  "codellama/CodeLlama-34b-Instruct-hf": "codellama-34b",
  "internlm/internlm-20b": "internlm-20b",
  "microsoft/phi-2": "phi-2"
}

/**
 * What a Vidur profile's path says: the file kind, the GPU (compute) or network device, and the
 * model (compute files), from the upstream layout `compute/<gpu>/<org>/<model>/mlp.csv`,
 * `network/<device>/all_reduce.csv` or the flattened `<gpu>_<org>_<model>_mlp.csv`,
 * `<device>_all_reduce.csv`. Known models get short names (`meta-llama/Llama-2-70b-hf` ->
 * `llama2-70b`, the preset name); others keep `org/model`. `undefined` when the name fits no
 * layout.
 *
 * @example
 * ```ts
 * import { vidurFileInfo } from "@loadledger/step-time"
 * vidurFileInfo("data/a100_meta-llama_Llama-2-70b-hf_mlp.csv") // => { kind: "mlp", gpu: "a100", model: "llama2-70b" }
 * vidurFileInfo("network/a100_dgx/all_reduce.csv") // => { kind: "all_reduce", gpu: "a100_dgx", model: undefined }
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurFileInfo = (
  path: string
):
  | {
      readonly kind: "mlp" | "attention" | "all_reduce" | "send_recv"
      readonly gpu: string
      readonly model: string | undefined
    }
  | undefined => {
  const p = path.replaceAll("\\", "/")
  const name = (org: string, model: string) => modelNames[`${org}/${model}`] ?? `${org}/${model}`
  const up = /(?:^|\/)compute\/([^/]+)\/([^/]+)\/([^/]+)\/(mlp|attention)\.csv$/.exec(p)
  if (up !== null) return { kind: up[4] as "mlp" | "attention", gpu: up[1]!, model: name(up[2]!, up[3]!) }
  const net = /(?:^|\/)network\/([^/]+)\/(all_reduce|send_recv)\.csv$/.exec(p)
  if (net !== null) return { kind: net[2] as "all_reduce" | "send_recv", gpu: net[1]!, model: undefined }
  const base = p.slice(p.lastIndexOf("/") + 1)
  const flatNet = /^(.+?_(?:dgx|pairwise_nvlink))_(all_reduce|send_recv)\.csv$/.exec(base)
  if (flatNet !== null)
    return { kind: flatNet[2] as "all_reduce" | "send_recv", gpu: flatNet[1]!, model: undefined }
  const flat = /^([a-z0-9]+)_([^_]+)_(.+)_(mlp|attention)\.csv$/.exec(base)
  if (flat !== null)
    return { kind: flat[4] as "mlp" | "attention", gpu: flat[1]!, model: name(flat[2]!, flat[3]!) }
  return undefined
}
