import { sglangDpLb } from "./sglangDpLb.js"
import { sglangV1Loads } from "./sglangV1Loads.js"
import type { CaseResult, VectorFormat } from "./types.js"
import { vllmCoord } from "./vllmCoord.js"
import { vllmLb } from "./vllmLb.js"
import { vllmWave } from "./vllmWave.js"

export type { CaseResult, VectorFormat } from "./types.js"

/** Every vector format, in detection order. Each module owns one upstream reference file format. */
export const formats: ReadonlyArray<VectorFormat> = [vllmLb, vllmWave, vllmCoord, sglangDpLb, sglangV1Loads]

/**
 * Detect the format of a parsed vector file and replay it.
 * Returns `undefined` when no known format matches.
 *
 * @since 0.1.0
 */
export const runVectors = (
  doc: unknown
): { readonly format: string; readonly results: ReadonlyArray<CaseResult> } | undefined => {
  const f = formats.find((x) => x.detect(doc))
  return f === undefined ? undefined : { format: f.name, results: f.run(doc) }
}
