/**
 * The trace as the loop reads it: an array or any iterable of requests, taken one arrival at a
 * time through a cursor that holds at most the next request (`Arrivals`), so a streamed trace keeps
 * nothing of a request past its record's life. A run needs two figures before it starts (the
 * request count, for the SLO's allowed misses and the progress total, and the last arrival, for the
 * load samples' spacing): an array has them, a `TraceShape` (e.g. `streamTraceFile`'s) states them,
 * and any other iterable is read once first to find them (and check every request, as an array is).
 */
import { isTokenCount, isTokenId } from "@loadledger/policies"
import type { TraceRequest } from "../Trace.js"
import type { TraceShape } from "../TraceStream.js"

export type { TraceShape }

/** A request the simulator cannot run, named by its index and field. */
export interface TraceProblem {
  readonly field: string
  readonly message: string
}

/** Trace row `i`'s field `f` breaks `rule`. */
const badField = (i: number, f: string, rule: string, v: unknown): TraceProblem => ({
  field: `trace[${i}].${f}`,
  message: `trace[${i}].${f} must be ${rule}, got ${String(v)}`
})

/**
 * Request `i` the simulator cannot run: an arrival that is not a finite number >= 0 (NaN spun
 * forever, Infinity held every other request back), a prompt that is not an integer >= 1 (0 ended in
 * a contradictory NoProgress), an output that is not an integer >= 0, a `requestId` that is not a
 * string, `tokenIds` that are not an array of at most `inputLength` token ids (`isTokenId`).
 * `parseTrace` gives only valid requests; this guards traces built by hand.
 */
export const checkRequest = (i: number, u: unknown): TraceProblem | undefined => {
  const r = u as TraceRequest | undefined
  // the field's name is built only for a bad request (one string per request was a tenth of a
  // large replay's allocation)
  if (typeof r !== "object" || r === null)
    return { field: `trace[${i}]`, message: `trace[${i}] must be a request object` }
  if (typeof r.requestId !== "string") return badField(i, "requestId", "a string", r.requestId)
  if (!(Number.isFinite(r.arrivalSeconds) && r.arrivalSeconds >= 0))
    return badField(i, "arrivalSeconds", "a finite number >= 0", r.arrivalSeconds)
  if (!(isTokenCount(r.inputLength) && r.inputLength >= 1))
    return badField(i, "inputLength", "an integer >= 1", r.inputLength)
  if (!isTokenCount(r.outputLength)) return badField(i, "outputLength", "an integer >= 0", r.outputLength)
  const ids = r.tokenIds
  if (ids !== undefined && !(Array.isArray(ids) && ids.length <= r.inputLength && ids.every(isTokenId)))
    return {
      field: `trace[${i}].tokenIds`,
      message: `trace[${i}].tokenIds must be absent or at most inputLength token ids (integers 0..4294967295)`
    }
  return undefined
}

const isIterable = (u: unknown): u is Iterable<unknown> =>
  typeof u === "object" && u !== null && typeof (u as Iterable<unknown>)[Symbol.iterator] === "function"

const hasShape = (u: object): u is TraceShape =>
  Number.isSafeInteger((u as TraceShape).count) &&
  (u as TraceShape).count >= 0 &&
  typeof (u as TraceShape).lastArrivalSeconds === "number"

/**
 * The shape of `trace` and how to read it, or the first reason it cannot run: an array is checked
 * whole; a `TraceShape` iterable is trusted for its shape (its requests are checked as they are
 * read); any other iterable is read once to check it and find its shape (a one-shot iterator, such
 * as a generator object, cannot be read twice and is refused).
 */
export const shapeOf = (trace: unknown): TraceShape | TraceProblem => {
  if (Array.isArray(trace)) {
    for (let i = 0; i < trace.length; i++) {
      const bad = checkRequest(i, trace[i])
      if (bad) return bad
    }
    return { count: trace.length, lastArrivalSeconds: trace.at(-1)?.arrivalSeconds ?? 0 }
  }
  if (!isIterable(trace))
    return { field: "trace", message: "trace must be an array or an iterable of requests" }
  if (hasShape(trace)) return { count: trace.count, lastArrivalSeconds: trace.lastArrivalSeconds }
  const it = trace[Symbol.iterator]()
  if ((it as unknown) === trace)
    return {
      field: "trace",
      message:
        "trace is a one-shot iterator (e.g. a generator object): the simulator reads a trace twice (once for its count and last arrival), so pass an iterable whose [Symbol.iterator]() starts a new pass, e.g. { [Symbol.iterator]: () => requests() }, or one with count and lastArrivalSeconds"
    }
  let count = 0
  let last = 0
  for (let n = it.next(); !n.done; n = it.next()) {
    const bad = checkRequest(count, n.value)
    if (bad) return bad
    last = (n.value as TraceRequest).arrivalSeconds
    count++
  }
  return { count, lastArrivalSeconds: last }
}

export const isProblem = (u: TraceShape | TraceProblem): u is TraceProblem => "field" in u

/**
 * The next arrivals of one run, read lazily: `peek` pulls the next request (checking it when the
 * trace was not checked whole), `take` hands it on. A streamed trace of another length or last
 * arrival than its shape stated is a `problem` (found as it is read: the run stops there).
 */
export class Arrivals {
  /** Requests taken (the next one's trace index). */
  taken = 0
  /** Requests read from the trace (taken, plus the one peeked). */
  private read = 0
  private head: TraceRequest | undefined = undefined
  private ended = false
  /** The arrival of the last request read (NaN: none). */
  lastReadSeconds = Number.NaN
  /** The first request's arrival (NaN: none read). */
  firstArrivalSeconds = Number.NaN
  /** Requests read that carry token ids / block hashes (`traceTokenIds`' tally). */
  fromTrace = 0
  blockHashes = 0
  problem: TraceProblem | undefined = undefined
  private readonly it: Iterator<TraceRequest>
  /** The source has nothing to hand on yet but is not over (an async trace's buffer, `TraceBuffer`). */
  private readonly waits: (() => boolean) | undefined
  /** Refuse a request earlier than the one before it (a source that cannot be sorted). */
  private readonly ordered: boolean

  constructor(
    trace: Iterable<TraceRequest>,
    /** Check each request as it is read (a trace that was not checked whole). */
    private readonly check: boolean,
    readonly shape: TraceShape,
    /** Every request read, kept (per-request output of a streamed trace), else undefined. */
    readonly rows: Array<TraceRequest> | undefined
  ) {
    this.it = trace[Symbol.iterator]()
    const w = (trace as { wouldBlock?: () => boolean }).wouldBlock
    this.waits = typeof w === "function" ? () => w.call(trace) : undefined
    this.ordered = this.waits !== undefined
  }

  /** The next request is not read yet: the source must be read further before the run goes on. */
  blocked(): boolean {
    return this.head === undefined && !this.ended && this.waits?.() === true
  }

  /** The next request to arrive, or undefined when none is left (or the trace broke its shape). */
  peek(): TraceRequest | undefined {
    if (this.head === undefined && !this.ended) this.pull()
    return this.head
  }

  /** Hand on the request `peek` gave. */
  take(): TraceRequest {
    const t = this.head!
    this.head = undefined
    this.taken++
    return t
  }

  /** Read what is left (a run that stopped early): the tally and the stated shape are checked. */
  drain(): void {
    while (this.peek() !== undefined) this.take()
  }

  private pull(): void {
    if (this.waits?.() === true) return
    const n = this.it.next()
    if (n.done || this.problem !== undefined) {
      this.end()
      return
    }
    const i = this.read
    const r = n.value
    const bad =
      (this.check ? checkRequest(i, r) : undefined) ??
      (this.ordered && i > 0 && r.arrivalSeconds < this.lastReadSeconds
        ? {
            field: `trace[${i}].arrivalSeconds`,
            message: `trace[${i}].arrivalSeconds ${r.arrivalSeconds} is earlier than the request before it (${this.lastReadSeconds}): an async trace must be in arrival order (it cannot be sorted)`
          }
        : undefined)
    if (bad !== undefined || i >= this.shape.count) {
      this.problem = bad ?? {
        field: "trace",
        message: `the trace holds more than the ${this.shape.count} requests its count states`
      }
      this.end()
      return
    }
    this.read++
    if (i === 0) this.firstArrivalSeconds = r.arrivalSeconds
    this.lastReadSeconds = r.arrivalSeconds
    if (r.tokenIds !== undefined) this.fromTrace++
    else if (r.hashIds !== undefined) this.blockHashes++
    this.rows?.push(r)
    this.head = r
  }

  private end(): void {
    this.ended = true
    if (this.problem !== undefined) return
    if (this.read !== this.shape.count)
      this.problem = {
        field: "trace",
        message: `the trace holds ${this.read} requests, its count states ${this.shape.count}`
      }
    else if (this.read > 0 && this.lastReadSeconds !== this.shape.lastArrivalSeconds)
      this.problem = {
        field: "trace",
        message: `the trace's last arrival is ${this.lastReadSeconds}s, its lastArrivalSeconds states ${this.shape.lastArrivalSeconds}s`
      }
  }
}
