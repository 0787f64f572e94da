/**
 * JSON model specs: the effect Schema of a {@link ModelSpec} (`ModelSpecJson`) and its decoder
 * (`modelFromJson`), which names the first bad field.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import type { ModelSpec } from "./Model.js"

const Positive = Schema.Finite.check(Schema.isGreaterThan(0))
const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const AttentionSchema = Schema.Struct({
  kind: Schema.Literals(["mla", "gqa", "mha"]),
  numHeads: PositiveInt,
  kvHeads: Schema.optional(PositiveInt),
  kvBytesPerTokenPerLayer: Positive,
  paramsPerLayer: Positive,
  flopsPerPair: Positive,
  sparseTopK: Schema.optional(PositiveInt),
  arithmetic: Schema.optional(Schema.Literals(["dense", "dsa"])),
  indexer: Schema.optional(
    Schema.Struct({
      heads: PositiveInt,
      headDim: PositiveInt,
      bytesPerElement: Positive,
      keyBytesPerTokenPerLayer: Positive
    })
  )
})

const MlpSchema = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("dense"), paramsPerLayer: Positive }),
  Schema.Struct({
    kind: Schema.Literal("moe"),
    numExperts: PositiveInt,
    topK: PositiveInt,
    expertParams: Positive,
    sharedExpertParams: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
    ep: PositiveInt,
    denseLayers: NonNegativeInt,
    denseParamsPerLayer: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
  })
])

/**
 * The JSON shape of a {@link ModelSpec} (effect Schema). Field names and units as in
 * {@link ModelSpec}; `tp` defaults to 1, `activationBytes` to 2.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ModelSpecJson, models } from "@loadledger/step-time"
 * Schema.is(ModelSpecJson)(models["llama2-70b"]) // => true
 * ```
 *
 * @category schemas
 * @since 0.1.0
 */
export const ModelSpecJson = Schema.Struct({
  name: Schema.String,
  numLayers: PositiveInt,
  hiddenSize: PositiveInt,
  vocabSize: PositiveInt,
  weightBytesPerParam: Positive,
  activationBytes: Schema.optional(Positive),
  tp: Schema.optional(PositiveInt),
  collective: Schema.optional(Schema.Literals(["gather", "all-to-all"])),
  attention: AttentionSchema,
  mlp: MlpSchema
})

/**
 * Why a JSON model spec was rejected: `path` is the JSON path of the first bad field.
 *
 * @category errors
 * @since 0.1.0
 */
export interface ModelSpecError {
  readonly _tag: "ModelSpecError"
  readonly path: string
  readonly message: string
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Decode a model spec from parsed JSON.
 *
 * **When to use**: to run the step-time model (or `loadledger step-time --model FILE`) on a model
 * that has no preset. Fails with a {@link ModelSpecError} naming the first bad field; never throws.
 * Extra checks beyond the schema: `mlp.topK <= mlp.numExperts`, `numExperts` divisible by `ep`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { modelFromJson, models } from "@loadledger/step-time"
 * const r = modelFromJson(JSON.parse(JSON.stringify(models["llama2-70b"])))
 * Result.isSuccess(r) // => true
 * const bad = modelFromJson({ ...models["llama2-70b"], numLayers: -1 })
 * Result.isFailure(bad) && bad.failure.path // => "numLayers"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const modelFromJson = (u: unknown): Result.Result<ModelSpec, ModelSpecError> => {
  const r = SchemaParser.decodeUnknownResult(ModelSpecJson)(u)
  if (Result.isFailure(r)) {
    const first = formatIssue(r.failure).issues[0]
    const path = (first?.path ?? [])
      .map((p) => (typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p)))
      .join(".")
    return Result.fail({ _tag: "ModelSpecError", path, message: first?.message ?? "invalid model spec" })
  }
  const v = r.success
  if (v.attention.arithmetic === "dsa") {
    if (v.attention.sparseTopK === undefined)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "attention.sparseTopK",
        message: 'arithmetic "dsa" needs sparseTopK'
      })
    if (v.attention.indexer === undefined)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "attention.indexer",
        message: 'arithmetic "dsa" needs indexer'
      })
  }
  if (v.mlp.kind === "moe") {
    if (v.mlp.topK > v.mlp.numExperts)
      return Result.fail({ _tag: "ModelSpecError", path: "mlp.topK", message: "topK exceeds numExperts" })
    if (v.mlp.numExperts % v.mlp.ep !== 0)
      return Result.fail({
        _tag: "ModelSpecError",
        path: "mlp.ep",
        message: "numExperts is not divisible by ep"
      })
  }
  return Result.succeed({ ...v, activationBytes: v.activationBytes ?? 2, tp: v.tp ?? 1 })
}
