/**
 * Shared shapes of the peer-router golden-vector files (`loadledger-peer-policy-golden`,
 * fixtures/reference/peers/README-llm-d.md §1): detection by `system`, case envelope, comparison.
 *
 * @since 0.2.0
 */
import type { CaseResult } from "./types.js"

/** One case of a peer vector file (fields beyond the envelope are read by each system's module). */
export interface PeerCase {
  readonly id: string
  readonly policy: string
  readonly config: Record<string, unknown>
  readonly workers: ReadonlyArray<Record<string, unknown> & { readonly id: string }>
  readonly steps: ReadonlyArray<Record<string, unknown> & { readonly op: string }>
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

/** True for a peer golden-vector document of the given system. */
export const isPeerDoc = (doc: unknown, system: string): boolean =>
  isObj(doc) && doc["format"] === "loadledger-peer-policy-golden" && doc["system"] === system

/** The cases of a peer document (an empty list when it has none). */
export const peerCases = (doc: unknown): ReadonlyArray<PeerCase> =>
  isObj(doc) && Array.isArray(doc["cases"]) ? (doc["cases"] as ReadonlyArray<PeerCase>) : []

/**
 * Compare an expected value with an actual one: objects key by key (every expected key; an actual
 * key the expectation lacks is a difference too), numbers with `===` or within `tol` relative when
 * given, strings/booleans/null exactly. Returns the first difference or `undefined`.
 */
export const diff = (expected: unknown, actual: unknown, path: string, tol = 0): string | undefined => {
  const show = () => `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return show()
    for (let i = 0; i < expected.length; i++) {
      const d = diff(expected[i], actual[i], `${path}[${i}]`, tol)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (isObj(expected)) {
    if (!isObj(actual) || Array.isArray(actual)) return show()
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)])
    for (const k of keys) {
      const d = diff(expected[k], actual[k], `${path}.${k}`, tol)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (typeof expected === "number" && typeof actual === "number") {
    if (expected === actual) return undefined
    if (tol > 0 && Math.abs(expected - actual) <= tol * Math.max(1, Math.abs(expected))) return undefined
    return show()
  }
  return expected === actual ? undefined : show()
}

/** Run every case, turning an exception into a failed result naming it. */
export const runCases = (doc: unknown, one: (c: PeerCase) => string | undefined): ReadonlyArray<CaseResult> =>
  peerCases(doc).map((c) => {
    try {
      const d = one(c)
      return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
    } catch (e) {
      return { id: c.id, ok: false, firstDiff: `exception: ${e instanceof Error ? e.message : String(e)}` }
    }
  })

/** Keep the keys of `o` that `expect` has (for partial expectations). */
export const pick = (
  o: Record<string, unknown>,
  expect: Record<string, unknown>
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(expect)) out[k] = o[k]
  return out
}
