/**
 * The calibration row and report types (steps, layers, attention kernels, collectives; errors,
 * parameters, MAPE reports): a leaf module below `Calibration.ts` and the fit's internals, which
 * all read them. `Calibration.ts` re-exports every one.
 *
 * @since 0.7.0
 */
import type { RankBatch } from "./Batch.js"
import type { Efficiencies } from "./Efficiencies.js"
import type { GpuSpec } from "./Hardware.js"
import type { ModelSpec } from "./Model.js"

interface SampleBase {
  readonly gpu: GpuSpec
  readonly measuredSeconds: number
  /** Label for per-group error reports (e.g. `h100-80gb`); defaults to the GPU's name. */
  readonly group?: string | undefined
  readonly phase?: "decode" | "prefill" | undefined
  /** Rows measured on the same setup share this key (repeats); see {@link crossValidate}. */
  readonly configuration?: string | undefined
  /** Requests in the step (step rows) or tokens through the layer (layer rows), for reports. */
  readonly batchSize?: number | undefined
  /**
   * The stack that measured the row (`splitwise`: a serving stack's whole steps; `vidur`: a
   * kernel profiler's GPU time). Rows of one source share its overhead parameters (per-layer,
   * per-request, per-step, eager) in {@link fit}; efficiencies are shared by every source on a
   * GPU. Rows without one form the stack `"unspecified"`.
   */
  readonly source?: string | undefined
}

/**
 * One measured step: the model and GPU it ran on, each rank's batch, and the measured step time
 * in seconds (splitwise rows). `kind` may be omitted.
 *
 * @example
 * ```ts
 * import { gpus, models, type StepSample } from "@loadledger/step-time"
 * const s: StepSample = { model: models["llama2-70b"]!, gpu: gpus["h100-80gb"]!, ranks: [{ decode: [600], extend: [] }], measuredSeconds: 0.03 }
 * s.ranks.length // => 1
 * ```
 *
 * @category calibration
 * @since 0.1.0
 */
export interface StepSample extends SampleBase {
  readonly kind?: "step" | undefined
  readonly model: ModelSpec
  readonly ranks: ReadonlyArray<RankBatch>
  /**
   * Whether the measured stack replayed decode steps from a CUDA graph (default true). Only the
   * shape-aware model ({@link fitShape}) reads it: an eager decode pays the launch floor.
   */
  readonly cudaGraph?: boolean | undefined
}

/**
 * One measured transformer layer without its attention kernel and collectives (Vidur's
 * `mlp.csv`: norms, QKV and output projections, rope, MLP, residual add), on one GPU of a
 * `model.tp`-way group, GPU kernel time only, with `tokens` tokens through it. Modelled as the
 * roofline of the attention projections plus the MLP's, plus `perLayerOverheadSeconds`.
 *
 * @example
 * ```ts
 * import { gpus, models, type LayerSample } from "@loadledger/step-time"
 * const s: LayerSample = { kind: "layer", model: models["llama2-70b"]!, gpu: gpus["a100-80gb"]!, tokens: 1, measuredSeconds: 0.0009 }
 * s.tokens // => 1
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export interface LayerSample extends SampleBase {
  readonly kind: "layer"
  readonly model: ModelSpec
  readonly tokens: number
}

/**
 * One measured attention kernel of one layer on one GPU of a `model.tp`-way group (Vidur's
 * `attention.csv`): the batch's KV reads against its pair FLOPs, plus
 * `perRequestSecondsPerLayer` per request.
 *
 * @example
 * ```ts
 * import { gpus, models, type AttentionSample } from "@loadledger/step-time"
 * const s: AttentionSample = { kind: "attention", model: models["llama2-70b"]!, gpu: gpus["a100-80gb"]!, ranks: [{ decode: [1024, 1024], extend: [] }], measuredSeconds: 0.00005 }
 * s.ranks[0]!.decode.length // => 2
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export interface AttentionSample extends SampleBase {
  readonly kind: "attention"
  readonly model: ModelSpec
  readonly ranks: ReadonlyArray<RankBatch>
}

/**
 * One measured collective inside one node: an all-reduce of `bytes` over `gpus` GPUs
 * (`(g - 1) x collectiveLatencySeconds + 2 (g - 1) / g x bytes / link`, the ring cost the step
 * model charges) or a send/recv of `bytes` between two GPUs (`latency + bytes / link`).
 *
 * @example
 * ```ts
 * import { gpus, type CollectiveSample } from "@loadledger/step-time"
 * const s: CollectiveSample = { kind: "all-reduce", gpu: gpus["a100-80gb"]!, gpus: 8, bytes: 1 << 20, measuredSeconds: 0.0001 }
 * s.gpus // => 8
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export interface CollectiveSample extends SampleBase {
  readonly kind: "all-reduce" | "send-recv"
  readonly gpus: number
  readonly bytes: number
}

/**
 * One calibration row: a whole step ({@link StepSample}), a layer's GEMMs
 * ({@link LayerSample}), an attention kernel ({@link AttentionSample}) or a collective
 * ({@link CollectiveSample}). Every kind is predicted from the same {@link Efficiencies}, so
 * per-operator profiles and step times calibrate one parameter set.
 *
 * @category calibration
 * @since 0.1.0
 */
export type CalibrationSample = StepSample | LayerSample | AttentionSample | CollectiveSample

/**
 * Why calibration could not run (`field` names the bad input: `samples`, or a CSV column).
 *
 * @category errors
 * @since 0.1.0
 */
export interface CalibrationError {
  readonly _tag: "CalibrationError"
  readonly field: string
  readonly message: string
  readonly row?: number | undefined
}

/**
 * Parameters per measurement stack (what {@link fit} returns): rows whose `source` has an entry
 * in `stacks` use it, every other row uses `params`.
 *
 * @category calibration
 * @since 0.2.0
 */
export interface StackParameters {
  readonly params: Partial<Efficiencies>
  readonly stacks: Readonly<Record<string, Partial<Efficiencies>>>
}

/**
 * One parameter set for every row, or one per measurement stack ({@link StackParameters}).
 *
 * @category calibration
 * @since 0.2.0
 */
export type CalibrationParameters = Partial<Efficiencies> | StackParameters

/**
 * Mean absolute percentage error (percent) overall and per `group/phase` label, with the median
 * absolute percentage error next to it (robust to a few corrupt rows).
 *
 * @category calibration
 * @since 0.1.0
 */
export interface MapeReport {
  readonly mape: number
  readonly medianApe: number
  readonly rows: number
  readonly byGroup: Record<
    string,
    { readonly mape: number; readonly medianApe: number; readonly rows: number }
  >
}
