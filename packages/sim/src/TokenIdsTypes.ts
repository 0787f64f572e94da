/**
 * Where token ids came from, as types (`TokenIdsOrigin`, `TraceTokenIds`), apart from `TokenIds.ts`
 * so the tally that builds them can name them without importing it back.
 *
 * @since 0.6.0
 */

/**
 * Where one request's token ids came from: `"trace"` (the trace carried them), `"block-hashes"`
 * (synthesised from its `hashIds`), `"synthetic"` (synthesised from its `requestId`: the trace has
 * neither).
 *
 * @category token ids
 * @since 0.5.0
 */
export type TokenIdsOrigin = "trace" | "block-hashes" | "synthetic"

/**
 * Where a trace's token ids came from: `origin`, the one origin of every request (`"mixed"` when
 * they differ; `"trace"` for an empty trace: nothing was synthesised), the count of requests of each
 * origin, and the cap on synthesised ids (`MAX_SYNTHETIC_TOKEN_IDS`). `simulate` puts it in
 * `PolicyResult.tokenIds`; `loadledger simulate` prints it as one line and in its JSON.
 *
 * @category token ids
 * @since 0.5.0
 */
export interface TraceTokenIds {
  readonly origin: TokenIdsOrigin | "mixed"
  readonly requests: {
    readonly trace: number
    readonly blockHashes: number
    readonly synthetic: number
  }
  readonly maxSynthesisedTokens: number
}
