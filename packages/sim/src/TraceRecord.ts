/**
 * The request record of a trace (`TraceRequest`) and a trace reader's error (`TraceError`).
 *
 * A leaf below `Trace.ts` (format detection, `parseTrace`, scaling; it re-exports both types, so
 * `import type { TraceRequest } from "./Trace.js"` keeps working) and the format readers
 * (`internal/traceFormats.ts`), so the readers do not import `Trace.ts` back (issue 29).
 *
 * @since 0.1.0
 */

/**
 * One request of a trace. `arrivalSeconds` counts from the trace start; lengths are tokens;
 * `hashIds` holds one id per 512-token prompt block (equal leading ids = a shareable prefix), absent
 * when the trace has no prefix information. `dpRank` pins the request to a rank; `bootstrapRoom` is
 * SGLang's PD bootstrap room (decimal string); `sessionId` names the conversation or agent session
 * the request belongs to, absent when the trace does not say (Mooncake and Azure traces do not).
 * `tokenIds` holds the prompt's leading token ids (each an integer `0..2^32-1`, at most
 * `inputLength` of them) when the trace carries them (generic traces' `token_ids`; no public trace
 * does). The simulator hands `hashIds` (as decimal strings), `sessionId` and token ids to the policy
 * as `RouteRequest.prefixHashes` / `sessionId` / `tokenIds`: the trace's ids, or ids synthesised from
 * `hashIds` or the request id where it has none (`tokenIdsOf`, since 0.5.0).
 *
 * @category models
 * @since 0.1.0
 */
export interface TraceRequest {
  readonly requestId: string
  readonly arrivalSeconds: number
  readonly inputLength: number
  readonly outputLength: number
  readonly hashIds?: ReadonlyArray<number> | undefined
  readonly dpRank?: number | undefined
  readonly bootstrapRoom?: string | undefined
  readonly sessionId?: string | undefined
  /** @since 0.5.0 */
  readonly tokenIds?: ReadonlyArray<number> | undefined
}

/**
 * A trace that could not be read. `line` is the 1-based line of the file at fault (the header is
 * line 1 in a CSV), `field` the column or key.
 *
 * @category errors
 * @since 0.1.0
 */
export interface TraceError {
  readonly _tag: "TraceError"
  readonly message: string
  readonly line?: number | undefined
  readonly field?: string | undefined
}
