/**
 * The envelope every peer-router golden-vector file shares (`loadledger-peer-policy-golden`,
 * `fixtures/reference/peers/README-*.md` §1): detection by `system`, the case shape, and the replay
 * loop that turns each case into a `CaseResult`.
 *
 * @since 0.2.0
 */
import type { CaseResult } from "./types.js"

/**
 * One case of a peer vector file: the envelope (`id`, `policy`, `config`, `workers`, `steps`);
 * the fields of a worker or a step beyond `id` / `op` are read by each system's module.
 *
 * @category conformance
 * @since 0.2.0
 */
export interface PeerCase {
  readonly id: string
  readonly policy: string
  readonly config: Readonly<Record<string, unknown>>
  readonly workers: ReadonlyArray<Record<string, unknown> & { readonly id: string }>
  readonly steps: ReadonlyArray<Record<string, unknown> & { readonly op: string }>
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

/**
 * Whether `doc` is a peer golden-vector document of `system`: `format` is
 * `"loadledger-peer-policy-golden"`, `system` matches, and `cases` is an array.
 *
 * @example
 * ```ts
 * import { isPeerDoc } from "./peerVectors.js"
 * isPeerDoc({ format: "loadledger-peer-policy-golden", system: "smg", cases: [] }, "smg") // => true
 * isPeerDoc({ format: "loadledger-peer-policy-golden", system: "smg", cases: [] }, "dynamo") // => false
 * isPeerDoc({ format: "loadledger-peer-policy-golden", system: "smg" }, "smg") // => false
 * ```
 *
 * @category conformance
 * @since 0.2.0
 */
export const isPeerDoc = (doc: unknown, system: string): boolean =>
  isObj(doc) &&
  doc["format"] === "loadledger-peer-policy-golden" &&
  doc["system"] === system &&
  Array.isArray(doc["cases"])

/**
 * Replay every case of a peer document with `runCase` (which returns the first difference, or
 * `undefined` when the case passes); an exception becomes a failed case naming it.
 *
 * @example
 * ```ts
 * import { runCases } from "./peerVectors.js"
 * const doc = { cases: [{ id: "a" }, { id: "b" }, { id: "c" }] }
 * runCases(doc, (c) => {
 *   if (c.id === "c") throw new Error("no worker w9")
 *   return c.id === "a" ? undefined : "step 0.worker: expected \"w1\", got \"w0\""
 * })
 * // => [{ id: "a", ok: true }, { id: "b", ok: false, firstDiff: "step 0.worker: expected \"w1\", got \"w0\"" },
 * //     { id: "c", ok: false, firstDiff: "exception: no worker w9" }]
 * ```
 *
 * @category conformance
 * @since 0.2.0
 */
export const runCases = (
  doc: unknown,
  runCase: (c: PeerCase) => string | undefined
): ReadonlyArray<CaseResult> =>
  (isObj(doc) && Array.isArray(doc["cases"]) ? (doc["cases"] as ReadonlyArray<PeerCase>) : []).map((c) => {
    try {
      const d = runCase(c)
      return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
    } catch (e) {
      return { id: c.id, ok: false, firstDiff: `exception: ${e instanceof Error ? e.message : String(e)}` }
    }
  })
