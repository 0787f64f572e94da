/**
 * The outcome of one golden-vector case: `firstDiff` names the first differing op and field,
 * e.g. `op 3 (request): rank expected 2, got 1`.
 *
 * @since 0.1.0
 */
export interface CaseResult {
  readonly id: string
  readonly ok: boolean
  readonly firstDiff?: string | undefined
}

/**
 * A vector-file format the conformance runner knows: `detect` says whether a parsed JSON document
 * is in this format; `run` replays every case against loadledger's implementation.
 *
 * @since 0.1.0
 */
export interface VectorFormat {
  readonly name: string
  readonly detect: (doc: unknown) => boolean
  readonly run: (doc: unknown) => ReadonlyArray<CaseResult>
}
