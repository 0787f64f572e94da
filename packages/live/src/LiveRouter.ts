/**
 * The effectful shell: poll every worker on its own schedule (bounded time and size per poll),
 * decode off the routing thread (bounded time per payload), fold results into a `RouterState`, and
 * route / finish / abort requests against it.
 *
 * Over 300 lines: one concept (the effectful shell around `RouterState`: one cell, its poll loop and
 * the calls that feed it); a quarter is the docstrings of its options and of the bounds on polls
 * and payloads.
 *
 * @since 0.1.0
 */
import type { Policy, RouteRequest } from "@loadledger/policies"

import { decodeLedger, decodeLoadStatFrame, type LedgerKind, type RankLoad } from "@loadledger/schema"

import * as Result from "effect/Result"
import { checkLiveRouterConfig } from "./internal/checks.js"

import { makeOffThreadDecoder } from "./internal/offThreadDecoder.js"

import type { PollFailure } from "./LastHeard.js"

import { makeRouterMetrics } from "./Metrics.js"

import { type Decision, finish, route } from "./Route.js"
import {
  applyPoll,
  ejectWorker,
  makeRouter,
  type RouterOptions,
  type RouterState,
  statuses
} from "./Router.js"

import { type SourceSpec, sourceDecodeKind, sourceUrl } from "./Source.js"
import type { RankStatus, RouterError } from "./Types.js"

/**
 * What `startLiveRouter` needs: the sources (one per physical worker), a policy, the router
 * options, and optionally a clock (seconds, monotonic; default `performance.now() / 1000`).
 *
 * - `decodeBudgetMs` (default 1000): a payload whose decode takes longer is a decode failure, and
 *   that worker is not polled again for 4 budgets (so one engine's payload cannot keep a core busy).
 * - `inThreadDecodeMaxBytes` (default 4 KiB): bodies up to this size are decoded on the routing
 *   thread (a DP-8 `/v1/loads` is about 1 KB and decodes in ~0.1 ms; an adversarial 4 KB one in
 *   under 1 ms); larger ones on a worker thread, one at a time, so a slow payload delays only
 *   other large payloads, never routing.
 * - `maxPollBytes` (default 4 MiB): a larger load body is a decode failure, not read further.
 * - `processMetrics` (default false): add prom-client's process series (RSS, event-loop lag).
 *
 * **Checked up front**, each absent or as follows: `policy` an object whose `init`, `observe`,
 * `route` and `finish` are functions; `sources` an array of `SourceSpec`s (see there: `url` an
 * http(s) base URL no other source has, `dpSize` an integer from 1 to 1024, `kind` a `SourceKind`,
 * `intervalMs` / `timeoutMs` from 1 to 2,147,483,647 ms, node's longest timer); the router options
 * (see `RouterOptions`); `clock` a function; `decodeBudgetMs` from 1 to 536,870,911 ms (a quarter
 * of that timer: the decode worker waits up to 4 budgets); `inThreadDecodeMaxBytes` an integer >=
 * 0; `maxPollBytes` an integer >= 1; `processMetrics` a boolean. See `startLiveRouter` for what a
 * refused value does.
 *
 * **Exclusion bound**: a worker that hangs, refuses connections or answers non-2xx is unhealthy
 * (out of the policy's view and of the fallback) at the end of its next poll, at most
 * `intervalMs + timeoutMs` after the fault began; it comes back at the end of the first poll that
 * answers, at most `intervalMs + timeoutMs` after it recovers (a timeout timer that fires late
 * because this process was stalled grants one grace of min(100, `timeoutMs`) ms first). A publisher whose timestamp freezes
 * leaves the view `staleAfterSeconds` after its last change. A proxy's refused connection
 * (`markUnreachable`) excludes the worker at once.
 *
 * @category models
 * @since 0.1.0
 */
export interface LiveRouterConfig<S> extends RouterOptions {
  readonly sources: ReadonlyArray<SourceSpec>
  readonly policy: Policy<S>
  readonly clock?: (() => number) | undefined
  readonly decodeBudgetMs?: number | undefined
  readonly inThreadDecodeMaxBytes?: number | undefined
  readonly maxPollBytes?: number | undefined
  readonly processMetrics?: boolean | undefined
}

/**
 * A running router. `route` places a request (it is in flight until `finish` or `abort`);
 * `ingest` folds a body received by other means as if polled from `url` (all of the worker's ranks
 * are replaced; decoded off-thread, hence a promise; its rows are judged like polled ones, whatever
 * `kind` decodes the body); `ingestLoadStatFrame` folds one frame
 * `["load", seq (8 bytes, big-endian), msgpack(["LoadStat", ...])]` from SGLang's load publisher
 * into the rank it names, dropping frames whose sequence number is not above the last one seen from
 * `url` (the transport, e.g. a ZeroMQ SUB socket, is the caller's; a frame's row, which replaces
 * the polled one, carries the running and waiting counts and no `numTotalTokens`: on an SGLang
 * `/v1/loads` worker it is partial, known with `missing: ["numTotalTokens"]`, unless an explicit
 * `requiredFields` asks for tokens); `markUnreachable` records a
 * failed proxy connection so the worker is excluded until its next good poll; `eject` takes a worker
 * out for `holdMs` whatever its polls say (a passive health check); `retried` counts a
 * request re-placed by a proxy; `ready` resolves once every source was polled once; `close` stops
 * all polls and the decode worker. `error`: set when `startLiveRouter` refused its config (see
 * there).
 *
 * @category models
 * @since 0.1.0
 */
export interface LiveRouter {
  readonly route: (request: RouteRequest) => Decision | RouterError
  readonly finish: (requestId: string) => boolean
  readonly abort: (requestId: string) => boolean
  readonly ingest: (url: string, body: string | Uint8Array, kind?: LedgerKind) => Promise<void>
  readonly ingestLoadStatFrame: (url: string, frames: ReadonlyArray<Uint8Array>) => void
  readonly markUnreachable: (url: string, message: string) => void
  readonly eject: (url: string, holdMs: number, message: string) => void
  readonly retried: (reason: string) => void
  readonly ranks: () => ReadonlyArray<RankStatus>
  readonly inflight: () => ReadonlyArray<number>
  readonly decisions: () => ReadonlyArray<number>
  readonly metrics: () => Promise<string>
  readonly metricsContentType: string
  readonly ready: Promise<void>
  readonly close: () => Promise<void>
  readonly error?: RouterError | undefined
}

const failure = (kind: PollFailure["kind"], message: string): PollFailure => ({
  _tag: "PollFailure",
  kind,
  message
})

const errorCode = (e: unknown): string | undefined => {
  let c: unknown = e
  for (let i = 0; i < 4 && c !== undefined && c !== null; i++) {
    const code = (c as { code?: unknown }).code
    if (typeof code === "string") return code
    c = (c as { cause?: unknown }).cause
  }
  return undefined
}

const decodeHere = (
  body: string | Uint8Array,
  kind: LedgerKind
): Result.Result<ReadonlyArray<RankLoad>, { readonly _tag: string; readonly message: string }> => {
  try {
    return decodeLedger(body, kind)
  } catch (e) {
    return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
  }
}

/** One poll: the body (bounded by `maxBytes`), or why there is none; all within `timeoutMs`. */
const pollOnce = async (
  src: SourceSpec,
  maxBytes: number
): Promise<Result.Result<Uint8Array, PollFailure>> => {
  const url = sourceUrl(src)
  const ac = new AbortController()
  const started = performance.now()
  // a timer that fires late means this process was stalled (CPU starved, GC): the answer may be
  // waiting unread, so a late timeout grants one short grace before blaming the worker
  let graced = false
  const expire = () => {
    const late = performance.now() - started - src.timeoutMs
    if (!graced && late > 20) {
      graced = true
      timer = setTimeout(expire, Math.min(100, src.timeoutMs))
      return
    }
    ac.abort()
  }
  let timer = setTimeout(expire, src.timeoutMs)
  try {
    const res = await fetch(url, { signal: ac.signal })
    if (res.status < 200 || res.status >= 300) {
      await res.body?.cancel().catch(() => {})
      return Result.fail(failure("http-status", `HTTP ${res.status} from ${url}`))
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    if (res.body !== null) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.length
        if (size > maxBytes) {
          ac.abort()
          return Result.fail(failure("decode", `load body above ${maxBytes} bytes from ${url}`))
        }
        chunks.push(chunk)
      }
    }
    return Result.succeed(Buffer.concat(chunks))
  } catch (e) {
    if (ac.signal.aborted)
      return Result.fail(failure("timeout", `no complete answer within ${src.timeoutMs} ms`))
    const code = errorCode(e)
    return Result.fail(failure("unreachable", `${code ?? "fetch failed"}: ${url}`))
  } finally {
    clearTimeout(timer)
  }
}

/** A router for a refused config: it polls nothing, starts no thread, and answers `error`. */
const refusedRouter = (error: RouterError): LiveRouter => {
  const metrics = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
  const nothing = () => {}
  return {
    route: () => error,
    finish: () => false,
    abort: () => false,
    ingest: async () => {},
    ingestLoadStatFrame: nothing,
    markUnreachable: nothing,
    eject: nothing,
    retried: nothing,
    ranks: () => [],
    inflight: () => [],
    decisions: () => [],
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    ready: Promise.resolve(),
    close: async () => {},
    error
  }
}

/**
 * Start a live router: one poll loop per source (first poll at once, then `intervalMs` after each
 * poll ends), each poll bounded by `timeoutMs` and `maxPollBytes`, each body decoded on a worker
 * thread within `decodeBudgetMs`.
 *
 * **When to use**: in a gateway process; `startProxy` puts an HTTP reverse proxy in front of it.
 *
 * **Errors**: the config is checked before anything starts (see `LiveRouterConfig`). The first
 * value at fault (in the order `policy`, `sources`, router options, the rest) gives a router that
 * polls nothing and starts no thread, whose `error` is a `RouterError` `InvalidInput` naming it
 * (`sources[0].kind`, `clientCount`, `decodeBudgetMs`), and whose every `route` answers that error;
 * `ready` and `close` resolve at once, `ranks`, `inflight` and `decisions` are empty, the rest do
 * nothing. `startProxy` refuses such a router with the same error. A caller that wants to fail
 * early reads `error` right after this call.
 *
 * @example
 * ```ts
 * import { startLiveRouter } from "@loadledger/live"

 * import { totalRequests } from "@loadledger/policies"

 * const router = startLiveRouter({
 *   sources: [{ url: "http://127.0.0.1:9", dpSize: 2, kind: "sglang-v1-loads", intervalMs: 200, timeoutMs: 100 }],
 *   policy: totalRequests,
 *   staleAfterSeconds: 1
 * })
 * await router.ready
 * // nothing listens on port 9: both ranks are unhealthy, there is nowhere to send a request
 * router.ranks().map((r) => r.condition) // => ["unhealthy", "unhealthy"]
 * router.route({ requestId: "r1", inputLength: 512 })._tag // => "RouterError"
 * await router.close()
 * // a bad value is refused before anything starts, naming the field
 * const bad = startLiveRouter({
 *   sources: [{ url: "http://127.0.0.1:9", dpSize: 0, kind: "sglang-v1-loads", intervalMs: 200, timeoutMs: 100 }],
 *   policy: totalRequests,
 *   staleAfterSeconds: 1
 * })
 * bad.error?.message // => "sources[0].dpSize must be an integer from 1 to 1024, got 0"
 * bad.route({ requestId: "r1", inputLength: 512 }) === bad.error // => true
 * await bad.close()
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const startLiveRouter = <S>(config: LiveRouterConfig<S>): LiveRouter => {
  const error = checkLiveRouterConfig(config)
  if (error !== undefined) return refusedRouter(error)
  const clock = config.clock ?? (() => performance.now() / 1000)
  const maxBytes = config.maxPollBytes ?? 4 * 1024 * 1024
  const budgetMs = config.decodeBudgetMs ?? 1000
  const decoder = makeOffThreadDecoder(budgetMs)
  const inThreadMax = config.inThreadDecodeMaxBytes ?? 4096
  let state: RouterState<S> = makeRouter(config.policy, config.sources, config)
  const metrics = makeRouterMetrics(
    () => ({ ranks: statuses(state, clock()), inflightPerRank: state.inflightPerRank }),
    config.processMetrics ?? false
  )

  const apply = (
    url: string,
    polled: Result.Result<ReadonlyArray<RankLoad>, PollFailure>,
    mode: "replace" | "merge" = "replace"
  ): void => {
    state = applyPoll(state, url, polled, clock(), mode)
    if (Result.isFailure(polled)) metrics.pollFailure(url, polled.failure.kind)
  }
  /** Decode and fold one body; true when it was over the decode budget. */
  const ingest = async (url: string, body: string | Uint8Array, kind: LedgerKind): Promise<boolean> => {
    let rows: Result.Result<ReadonlyArray<RankLoad>, { readonly _tag: string; readonly message: string }>
    if (body.length <= inThreadMax) {
      const started = performance.now()
      rows = decodeHere(body, kind)
      metrics.decodeSeconds((performance.now() - started) / 1000)
    } else {
      rows = await decoder.decode(body, kind)
      for (const ms of decoder.takeTimings()) metrics.decodeSeconds(ms / 1000)
    }
    apply(
      url,
      Result.isSuccess(rows)
        ? Result.succeed(rows.success)
        : Result.fail(failure("decode", `${rows.failure._tag}: ${rows.failure.message}`))
    )
    return Result.isFailure(rows) && rows.failure._tag === "DecodeBudgetExceeded"
  }

  const lastSeq = new Map<string, bigint>()
  const ingestLoadStatFrame = (url: string, frames: ReadonlyArray<Uint8Array>): void => {
    const f = decodeLoadStatFrame(frames)
    if (Result.isFailure(f)) {
      apply(url, Result.fail(failure("decode", `${f.failure._tag}: ${f.failure.message}`)))
      return
    }
    const last = lastSeq.get(url)
    if (last !== undefined && f.success.seq <= last) return
    lastSeq.set(url, f.success.seq)
    // one frame holds one small LoadStat: decoded here, bounded by the frame's size
    const rows = decodeLedger(frames[2]!, "load-stat")
    apply(
      url,
      Result.isSuccess(rows)
        ? Result.succeed(rows.success)
        : Result.fail(failure("decode", `${rows.failure._tag}: ${rows.failure.message}`)),
      "merge"
    )
  }

  let closed = false
  const sleeps = new Set<() => void>()
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t)
        sleeps.delete(done)
        resolve()
      }
      const t = setTimeout(done, ms)
      sleeps.add(done)
    })
  let firstPolls = config.sources.length
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
    if (firstPolls === 0) resolve()
  })
  const loop = async (src: SourceSpec) => {
    let first = true
    while (!closed) {
      const r = await pollOnce(src, maxBytes)
      if (closed) break
      let slow = false
      if (Result.isSuccess(r)) slow = await ingest(src.url, r.success, sourceDecodeKind(src))
      else apply(src.url, Result.fail(r.failure))
      if (first) {
        first = false
        if (--firstPolls === 0) markReady()
      }
      // a payload over the decode budget is not decoded again before 4 budgets have passed
      await sleep(slow ? Math.max(src.intervalMs, 4 * budgetMs) : src.intervalMs)
    }
  }
  const loops = Promise.all(config.sources.map(loop))

  const end = (requestId: string): boolean => {
    const r = finish(state, requestId, clock())
    state = r.state
    return r.found
  }
  return {
    route: (request) => {
      const r = route(state, request, clock())
      if (r._tag === "RouterError") return r
      state = r.state
      metrics.decision(r.decision.rankId, r.decision.mode, r.decision.fallbackReason)
      return r.decision
    },
    finish: end,
    abort: end,
    ingest: async (url, body, kind = "auto") => {
      await ingest(url, body, kind)
    },
    ingestLoadStatFrame,
    markUnreachable: (url, message) => apply(url, Result.fail(failure("unreachable", message))),
    eject: (url, holdMs, message) => {
      state = ejectWorker(state, url, holdMs / 1000, message, clock())
      metrics.ejection(url)
    },
    retried: (reason) => metrics.retry(reason),
    ranks: () => statuses(state, clock()),
    inflight: () => state.inflightPerRank,
    decisions: () => state.decisions,
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    ready,
    close: async () => {
      closed = true
      for (const wake of [...sleeps]) wake()
      await decoder.close()
      await loops
      markReady()
    }
  }
}
