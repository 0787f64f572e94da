/**
 * What the peer-system vector formats (production-stack, SMG) share: the case shape, the document check and the replay loop with its first-difference message.
 *
 * @since 0.1.0
 */
import type { CaseResult } from "./types.js"
import { firstDiff } from "./vllmLb.js"

/**
 * The envelope every peer-router golden file shares (`format: "loadledger-peer-policy-golden"`,
 * `system`, `cases`), specified in `fixtures/reference/peers/README-smg.md` §1.
 *
 * @since 0.2.0
 */
export interface PeerCase {
  readonly id: string
  readonly policy: string
  readonly config: Readonly<Record<string, unknown>>
  readonly workers: ReadonlyArray<Record<string, unknown>>
  readonly steps: ReadonlyArray<Record<string, unknown>>
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

/** Whether `doc` is a peer golden file of `system`. */
export const isPeerDoc = (doc: unknown, system: string): boolean =>
  isObj(doc) &&
  doc.format === "loadledger-peer-policy-golden" &&
  doc.system === system &&
  Array.isArray(doc.cases)

/** Compare only the keys the expectation lists (a port matches `worker` and what it computes). */
export const diffExpect = (
  expect: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, unknown>>,
  where: string
): string | undefined => {
  for (const k of Object.keys(expect)) {
    const d = firstDiff(expect[k], actual[k], `${where}.${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

/** Run every case with `runCase`, turning a thrown error into a failed case. */
export const runCases = (
  doc: unknown,
  runCase: (c: PeerCase) => string | undefined
): ReadonlyArray<CaseResult> =>
  ((doc as { cases: ReadonlyArray<PeerCase> }).cases ?? []).map((c) => {
    try {
      const d = runCase(c)
      return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
    } catch (e) {
      return { id: c.id, ok: false, firstDiff: `threw: ${String(e)}` }
    }
  })
