/**
 * The effectful shell: poll every worker on its own schedule (effect HTTP client, per-source
 * timeout), fold results into a `RouterState`, and route / finish / abort requests against it.
 *
 * @since 0.1.0
 */
import type { Policy, RouteRequest } from "@loadledger/policies"
import { decodeLoadStatFrame } from "@loadledger/schema"
import { Cause, Effect, Fiber, Result, Schedule } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { type DecodeLedger, decodeLedger, type LedgerKind, type LedgerRow } from "./internal/decode.js"
import type { PollFailure } from "./Ledger.js"
import { makeRouterMetrics } from "./Metrics.js"
import type { RankStatus } from "./RankStatus.js"
import {
  applyPoll,
  type Decision,
  finish,
  makeRouter,
  type RouterError,
  type RouterOptions,
  type RouterState,
  route,
  statuses
} from "./Router.js"
import { type SourceSpec, sourceDecodeKind, sourceUrl } from "./Source.js"

/**
 * What `startLiveRouter` needs: the sources (one per physical worker), a policy, the router
 * options, and optionally a clock (seconds, monotonic; default `performance.now() / 1000`) and a
 * decoder (default: @loadledger/schema's `decodeLedger`).
 *
 * @category models
 * @since 0.1.0
 */
export interface LiveRouterConfig<S> extends RouterOptions {
  readonly sources: ReadonlyArray<SourceSpec>
  readonly policy: Policy<S>
  readonly clock?: (() => number) | undefined
  readonly decode?: DecodeLedger | undefined
}

/**
 * A running router. `route` places a request (it is in flight until `finish` or `abort`);
 * `ingest` folds a body received by other means as if polled from `url` (all of the worker's ranks
 * are replaced); `ingestLoadStatFrame` folds one frame `["load", seq (8 bytes, big-endian),
 * msgpack(["LoadStat", ...])]` from SGLang's load publisher (decoded by @loadledger/schema) into
 * the rank it names, leaving the others as they are, and drops frames whose sequence number is not
 * above the last one seen from `url` (the transport, e.g. a ZeroMQ SUB socket, is the caller's); `markUnreachable` records a failed proxy connection so the
 * worker is excluded until its next good poll; `ready` resolves once every source was polled once;
 * `close` stops all polls and waits for them.
 *
 * @category models
 * @since 0.1.0
 */
export interface LiveRouter {
  readonly route: (request: RouteRequest) => Decision | RouterError
  readonly finish: (requestId: string) => boolean
  readonly abort: (requestId: string) => boolean
  readonly ingest: (url: string, body: string | Uint8Array, kind?: LedgerKind) => void
  readonly ingestLoadStatFrame: (url: string, frames: ReadonlyArray<Uint8Array>) => void
  readonly markUnreachable: (url: string, message: string) => void
  readonly ranks: () => ReadonlyArray<RankStatus>
  readonly inflight: () => ReadonlyArray<number>
  readonly decisions: () => ReadonlyArray<number>
  readonly metrics: () => Promise<string>
  readonly metricsContentType: string
  readonly ready: Promise<void>
  readonly close: () => Promise<void>
}

const failure = (kind: PollFailure["kind"], message: string): PollFailure => ({
  _tag: "PollFailure",
  kind,
  message
})

const pollOnce = (src: SourceSpec) =>
  Effect.gen(function* () {
    const res = yield* HttpClient.get(sourceUrl(src))
    if (res.status < 200 || res.status >= 300) {
      return yield* Effect.fail(failure("http-status", `HTTP ${res.status} from ${sourceUrl(src)}`))
    }
    return yield* res.text
  }).pipe(
    Effect.timeout(src.timeoutMs),
    Effect.mapError((e): PollFailure => {
      if (Cause.isTimeoutError(e)) return failure("timeout", `no answer within ${src.timeoutMs} ms`)
      if ((e as { _tag?: unknown })._tag === "PollFailure") return e as PollFailure
      return failure("unreachable", e instanceof Error ? e.message : String(e))
    })
  )

/**
 * Start a live router: one poll loop per source (first poll at once, then every `intervalMs`),
 * each poll bounded by `timeoutMs`.
 *
 * **When to use**: in a gateway process; see `examples/router/` for a reverse proxy built on it.
 *
 * @example
 * ```ts
 * import { startLiveRouter } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const router = startLiveRouter({
 *   sources: [{ url: "http://127.0.0.1:30000", dpSize: 2, kind: "sglang-v1-loads", intervalMs: 200, timeoutMs: 100 }],
 *   policy: totalRequests,
 *   staleAfterSeconds: 1
 * })
 * await router.ready
 * const d = router.route({ requestId: "r1", inputLength: 512 })
 * if (d._tag !== "RouterError") router.finish("r1")
 * await router.close()
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const startLiveRouter = <S>(config: LiveRouterConfig<S>): LiveRouter => {
  const clock = config.clock ?? (() => performance.now() / 1000)
  const decode = config.decode ?? decodeLedger
  let state: RouterState<S> = makeRouter(config.policy, config.sources, config)
  const metrics = makeRouterMetrics(() => ({
    ranks: statuses(state, clock()),
    inflightPerRank: state.inflightPerRank
  }))

  const apply = (
    url: string,
    polled: Result.Result<ReadonlyArray<LedgerRow>, PollFailure>,
    mode: "replace" | "merge" = "replace"
  ): void => {
    state = applyPoll(state, url, polled, clock(), mode)
    if (Result.isFailure(polled)) metrics.pollFailure(url, polled.failure.kind)
  }
  const ingest = (url: string, body: string | Uint8Array, kind: LedgerKind): void => {
    const rows = decode(body, kind)
    apply(
      url,
      Result.isSuccess(rows)
        ? Result.succeed(rows.success)
        : Result.fail(failure("decode", `${rows.failure._tag}: ${rows.failure.message}`))
    )
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
    const rows = decode(frames[2]!, "load-stat")
    apply(
      url,
      Result.isSuccess(rows)
        ? Result.succeed(rows.success)
        : Result.fail(failure("decode", `${rows.failure._tag}: ${rows.failure.message}`)),
      "merge"
    )
  }

  let firstPolls = config.sources.length
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
    if (firstPolls === 0) resolve()
  })
  const loop = (src: SourceSpec) => {
    let first = true
    const once = pollOnce(src).pipe(
      Effect.result,
      Effect.flatMap((r) =>
        Effect.sync(() => {
          if (Result.isSuccess(r)) ingest(src.url, r.success, sourceDecodeKind(src))
          else apply(src.url, Result.fail(r.failure))
          if (first) {
            first = false
            if (--firstPolls === 0) markReady()
          }
        })
      )
    )
    return once.pipe(Effect.repeat(Schedule.spaced(src.intervalMs)))
  }
  const program = Effect.forEach(config.sources, loop, { concurrency: "unbounded", discard: true }).pipe(
    Effect.provide(FetchHttpClient.layer)
  )
  const fiber = Effect.runFork(program)

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
      metrics.decision(r.decision.rankId, r.decision.mode)
      return r.decision
    },
    finish: end,
    abort: end,
    ingest: (url, body, kind = "auto") => ingest(url, body, kind),
    ingestLoadStatFrame,
    markUnreachable: (url, message) => apply(url, Result.fail(failure("unreachable", message))),
    ranks: () => statuses(state, clock()),
    inflight: () => state.inflightPerRank,
    decisions: () => state.decisions,
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    ready,
    close: async () => {
      await Effect.runPromise(Fiber.interrupt(fiber))
      markReady()
    }
  }
}
