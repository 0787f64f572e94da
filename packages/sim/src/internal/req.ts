/**
 * One request's record in a simulation run: its trace row, what its policy is given, and the
 * scheduler's progress on it (prefill, context, KV held, tokens generated, times). Mutable on
 * purpose, private to one `simulate` call.
 */
import type { RouteRequest } from "@loadledger/policies"
import { tokenIdsOf } from "../TokenIds.js"
import type { TraceRequest } from "../Trace.js"
import { BLOCK_TOKENS } from "./prefixCache.js"

export class Req {
  rank = -1
  frontEnd = 0
  /** Tokens to compute before decoding: the prompt, or prompt + generated after a retraction. */
  prefillTarget: number
  /** Tokens of the sequence already in KV (cached prefix + computed). */
  ctx = 0
  /** Of `ctx`, how many are prefill tokens (cached or computed) in the current admission. */
  prefilled = 0
  heldBlocks = 0
  kvTokens = 0
  generated = 0
  cachedTokens = 0
  retractions = 0
  pendingUncached = 0
  chunk = 0
  /** When it joined its rank's queue (routed); -Infinity until then. */
  queuedSeconds = Number.NEGATIVE_INFINITY
  firstScheduledSeconds = Number.NaN
  firstTokenSeconds = Number.NaN
  lastTokenSeconds = Number.NaN
  finishSeconds = Number.NaN
  rejected: string | undefined = undefined
  // while decoding, ctx / generated / kvTokens / lastTokenSeconds advance lazily (see DecodeSet)
  doneAt = 0
  allocAt = 0
  decodeEpoch = 0
  worstGapSeconds = 0
  sharedFrom = Number.POSITIVE_INFINITY
  // the rank's running list (`Rank.link`): admission order, and the neighbours in it
  runSeq = 0
  runPrev: Req | undefined = undefined
  runNext: Req | undefined = undefined
  readonly outputTarget: number
  readonly fullBlocks: number
  /**
   * What the policy is given, less `tokenIds`: the trace's block hashes as `prefixHashes`, its
   * session if it has one (`routeRequest` adds the token ids).
   */
  readonly request: RouteRequest
  constructor(
    readonly index: number,
    readonly t: TraceRequest,
    readonly room: string
  ) {
    this.request = {
      requestId: t.requestId,
      inputLength: t.inputLength,
      routedDpRank: t.dpRank,
      bootstrapRoom: room,
      prefixHashes: t.hashIds?.map(String),
      sessionId: t.sessionId
    }
    this.prefillTarget = t.inputLength
    this.outputTarget = Math.max(1, t.outputLength)
    this.fullBlocks = t.hashIds ? Math.min(t.hashIds.length, Math.floor(t.inputLength / BLOCK_TOKENS)) : 0
  }

  /**
   * The request with its token ids (`tokenIdsOf`), built when it is routed and not kept: a trace of
   * millions of requests never holds their ids at once.
   */
  routeRequest(): RouteRequest {
    return { ...this.request, tokenIds: tokenIdsOf(this.t).tokenIds }
  }
}
