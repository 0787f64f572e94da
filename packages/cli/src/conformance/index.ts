/**
 * The conformance runner: every known vector format, and `runVectors`, which finds the format of a vector file and replays its cases.
 *
 * @since 0.1.0
 */
import { peerAibrix } from "./peerAibrix.js"
import { peerDynamo } from "./peerDynamo.js"
import { peerDynamoAdmission } from "./peerDynamoAdmission.js"
import { peerLlmD } from "./peerLlmD.js"
import { peersProductionStack } from "./peersProductionStack.js"
import { peersSmg } from "./peersSmg.js"
import { policyOps } from "./policyOps.js"
import { sglangDpLb } from "./sglangDpLb.js"
import { sglangV1Loads } from "./sglangV1Loads.js"
import { trtllmAdp } from "./trtllmAdp.js"
import type { CaseResult, VectorFormat } from "./types.js"
import { vllmCoord } from "./vllmCoord.js"
import { vllmLb } from "./vllmLb.js"
import { vllmWave } from "./vllmWave.js"

/**
 * The two shapes of the conformance runner, re-exported from `./types.js`: `VectorFormat` (one
 * upstream golden-vector file format: `name`, `detect(doc)`, `run(doc)`) and `CaseResult` (the
 * outcome of one case of such a file).
 *
 * **When to use**: `CaseResult` to read what {@link runVectors} returns (`loadledger conformance`
 * prints one line per result); `VectorFormat` to add a format to {@link formats}.
 *
 * Shapes: `CaseResult = { id, ok, firstDiff? }` where `firstDiff` names the first differing op
 * and field (`op 3 (request): rank expected 2, got 1`) and is absent when `ok`. A case that
 * differs is a result with `ok: false`, not an exception; a document no format recognises makes
 * {@link runVectors} return `undefined`.
 *
 * Upstream: the golden-vector files in `fixtures/reference/*` (their README.md says which SGLang
 * or vLLM file and commit each one replays).
 *
 * @example
 * ```ts
 * import { type CaseResult, runVectors } from "./index.js"
 * const out = runVectors({ format: "sglang-dp-lb-golden", cases: [] })
 * out?.format // => "sglang-dp-lb-golden"
 * const failed: ReadonlyArray<CaseResult> = out?.results.filter((r) => !r.ok) ?? []
 * failed.length // => 0
 * runVectors({ format: "something-else" }) // => undefined
 * ```
 *
 * @category conformance
 * @since 0.1.0
 */
export type { CaseResult, VectorFormat } from "./types.js"

/**
 * Every vector format, in detection order. Each module owns one upstream reference file format.
 *
 * **When to use**: to list what `loadledger conformance` can replay (`formats.map((f) => f.name)`).
 *
 * @example
 * ```ts
 * import { formats } from "./index.js"
 * formats.map((f) => f.name).includes("sglang-dp-lb-golden") // => true
 * ```
 *
 * @category conformance
 * @since 0.1.0
 */
export const formats: ReadonlyArray<VectorFormat> = [
  vllmLb,
  vllmWave,
  vllmCoord,
  sglangDpLb,
  sglangV1Loads,
  peersSmg,
  peersProductionStack,
  peerDynamo,
  peerDynamoAdmission,
  peerAibrix,
  peerLlmD,
  trtllmAdp,
  policyOps
]

/**
 * Detect the format of a parsed vector file and replay it.
 * Returns `undefined` when no known format matches.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { runVectors } from "./index.js"
 * const out = runVectors(JSON.parse(readFileSync("fixtures/reference/vllm/lb_cases.json", "utf8")))
 * out?.format // => "vllm-lb"
 * out?.results.every((r) => r.ok) // => true
 * runVectors({ format: "something-else", cases: [] }) // => undefined
 * ```
 *
 * @category conformance
 * @since 0.1.0
 */
export const runVectors = (
  doc: unknown
): { readonly format: string; readonly results: ReadonlyArray<CaseResult> } | undefined => {
  const f = formats.find((x) => x.detect(doc))
  return f === undefined ? undefined : { format: f.name, results: f.run(doc) }
}
