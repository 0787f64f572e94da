/**
 * The effectful shell: poll every worker on its own schedule (bounded time and size per poll),
 * decode off the routing thread (bounded time per payload), fold results into a `RouterState`, and
 * route / finish / abort requests against it; workers added and removed at run time, and other
 * replicas' bookings folded in. Its config and interface are `LiveRouterConfig.ts`.
 *
 * @since 0.1.0
 */
import {
  decodeLedger,
  decodeLoadStatFrame,
  formatDecodeError,
  type LedgerKind,
  type RankLoad
} from "@loadledger/schema"
import * as Result from "effect/Result"
import { addDiagnosisReport, type DiagnosisWindow, diagnoseWindow } from "./DiagnosisWindow.js"
import { attachBookings } from "./internal/bookingsGlue.js"
import { checkLiveRouterConfig, checkWorkers } from "./internal/checks.js"
import { checkGateways, startGateways } from "./internal/gatewayLoop.js"
import { makeOffThreadDecoder } from "./internal/offThreadDecoder.js"
import { decodeHere, failure, pollOnce } from "./internal/poll.js"
import { refusedRouter } from "./internal/refusedRouter.js"
import { safeClock } from "./internal/safeClock.js"
import { makeSleeper } from "./internal/sleeper.js"
import { workerKey } from "./internal/workerKey.js"
import type { PollFailure } from "./LastHeard.js"
import type { LiveRouter, LiveRouterConfig } from "./LiveRouterConfig.js"
import { makeRouterMetrics } from "./Metrics.js"
import { finish, route } from "./Route.js"
import { applyPoll, ejectWorker, makeRouter, type RouterState, statuses } from "./Router.js"
import { type SourceSpec, sourceDecodeKind, sourceUrl } from "./Source.js"
import { addWorker, compactWorkers, removeWorker } from "./WorkerSet.js"

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
  const error = checkLiveRouterConfig(config) ?? checkGateways(config.gateways)
  if (error !== undefined) return refusedRouter(error)
  // a throwing or non-finite injected clock falls back to its last good reading (safeClock.ts)
  const clock = safeClock(config.clock)
  const maxBytes = config.maxPollBytes ?? 4 * 1024 * 1024
  const budgetMs = config.decodeBudgetMs ?? 1000
  const decoder = makeOffThreadDecoder(budgetMs)
  const inThreadMax = config.inThreadDecodeMaxBytes ?? 4096
  let state: RouterState<S> = makeRouter(config.policy, config.sources, config)
  // the loads polled over the last diagnosisWindowSeconds, diagnosed at scrape time
  let diagnosisWindow: DiagnosisWindow = new Map()
  const diagnosisSeconds = config.diagnosisWindowSeconds ?? 300
  const metrics = makeRouterMetrics(
    () => ({ ranks: statuses(state, clock()), inflightPerRank: state.inflightPerRank }),
    config.processMetrics ?? false,
    () => diagnoseWindow(diagnosisWindow)
  )

  const apply = (
    url: string,
    polled: Result.Result<ReadonlyArray<RankLoad>, PollFailure>,
    mode: "replace" | "merge" = "replace"
  ): void => {
    state = applyPoll(state, url, polled, clock(), mode)
    if (Result.isFailure(polled)) metrics.pollFailure(url, polled.failure.kind)
    else if (mode === "replace")
      diagnosisWindow = addDiagnosisReport(diagnosisWindow, url, polled.success, clock(), diagnosisSeconds)
  }
  /** Decode and fold one body; true when it was over the decode budget. */
  const ingest = async (url: string, body: string | Uint8Array, kind: LedgerKind): Promise<boolean> => {
    const rows = await decodeBody(body, kind)
    apply(
      url,
      Result.isSuccess(rows)
        ? Result.succeed(rows.success.rows)
        : Result.fail(failure("decode", `${rows.failure._tag}: ${rows.failure.message}`))
    )
    return Result.isFailure(rows) && rows.failure._tag === "DecodeBudgetExceeded"
  }
  /** A small body decoded here, a larger one on the decoder thread within the budget. */
  const decodeBody = async (body: string | Uint8Array, kind: LedgerKind) => {
    if (body.length > inThreadMax) {
      const r = await decoder.decode(body, kind)
      for (const ms of decoder.takeTimings()) metrics.decodeSeconds(ms / 1000)
      return r
    }
    const started = performance.now()
    const r = decodeHere(body, kind)
    metrics.decodeSeconds((performance.now() - started) / 1000)
    return r
  }

  const lastSeq = new Map<string, bigint>()
  const ingestLoadStatFrame = (url: string, frames: ReadonlyArray<Uint8Array>): void => {
    const f = decodeLoadStatFrame(frames)
    if (Result.isFailure(f)) {
      apply(url, Result.fail(failure("decode", `${f.failure._tag}: ${formatDecodeError(f.failure)}`)))
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
        : Result.fail(failure("decode", `${rows.failure._tag}: ${formatDecodeError(rows.failure)}`)),
      "merge"
    )
  }

  let closed = false
  const { sleep, wakeAll } = makeSleeper()
  const gateways = config.gateways ?? []
  let firstPolls = config.sources.length + gateways.length
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
    if (firstPolls === 0) resolve()
  })
  const shared =
    config.bookings === undefined
      ? undefined
      : attachBookings(config.bookings, {
          get: () => state,
          set: (s) => {
            state = s
          },
          clock,
          registry: metrics.registry,
          onConnection: config.onBookings
        })
  // a removed source's loop ends after its poll in progress; its ranks stay until nothing is in flight
  const removed = new Set<SourceSpec>()
  const loop = async (src: SourceSpec) => {
    let counted = !initial.has(src)
    while (!closed && !removed.has(src)) {
      const r = await pollOnce(sourceUrl(src), src, maxBytes)
      if (closed || removed.has(src)) break
      let slow = false
      if (Result.isSuccess(r)) slow = await ingest(src.url, r.success, sourceDecodeKind(src))
      else apply(src.url, Result.fail(r.failure))
      if (!counted) {
        counted = true
        if (--firstPolls === 0) markReady()
      }
      // a payload over the decode budget is not decoded again before 4 budgets have passed
      await sleep(slow ? Math.max(src.intervalMs, 4 * budgetMs) : src.intervalMs)
    }
  }
  const initial = new Set(config.sources)
  const running = new Map<string, SourceSpec>()
  const loops = new Set<Promise<void>>()
  const run = (src: SourceSpec) => {
    running.set(workerKey(src.url), src)
    const p = loop(src).finally(() => loops.delete(p))
    loops.add(p)
  }
  for (const src of config.sources) run(src)
  // a worker leaves with a removal (removeSource, or a gateway's report that no longer names it)
  let leaving = false
  const compact = () => {
    if (removed.size > 0 || leaving) state = compactWorkers(state, clock())
  }
  const gatewayCells = startGateways(gateways, {
    stopped: () => closed,
    get: () => state,
    set: (s) => {
      state = s
    },
    clock,
    direct: () => new Set(running.keys()),
    decode: decodeBody,
    maxBytes,
    sleep,
    firstPoll: () => --firstPolls === 0 && markReady(),
    changed: (status, added, gone) => {
      leaving ||= gone.length > 0
      compact()
      config.onGateway?.(status, added, gone)
    },
    track: (p) => {
      const q = p.finally(() => loops.delete(q))
      loops.add(q)
    }
  })

  const end = (requestId: string): boolean => {
    const r = finish(state, requestId, clock())
    state = r.state
    if (r.found) shared?.released(requestId)
    compact()
    return r.found
  }
  return {
    route: (request) => {
      const r = route(state, request, clock())
      if (r._tag === "RouterError") return r
      state = r.state
      metrics.decision(r.decision.rankId, r.decision.mode, r.decision.fallbackReason)
      shared?.placed(request.requestId, r.decision.rankId, request.inputLength)
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
    addSource: (src) => {
      const bad = checkWorkers([src], "sources")
      if (bad !== undefined)
        return {
          ...bad,
          field: bad.field?.replace("sources[0]", "source"),
          message: bad.message.replace("sources[0]", "source")
        }
      if (closed) return undefined
      const old = running.get(workerKey(src.url))
      if (old !== undefined && !removed.has(old)) return undefined
      const next = addWorker(state, src, clock())
      if ("_tag" in next) return next
      state = next
      run(src)
      return undefined
    },
    removeSource: (url) => {
      const src = running.get(workerKey(url))
      if (src === undefined || removed.has(src)) return false
      removed.add(src)
      running.delete(workerKey(url))
      state = removeWorker(state, url, clock())
      compact()
      return true
    },
    ranks: () => statuses(state, clock()),
    gateways: () => gatewayCells.map((c) => c.current),
    inflight: () => state.inflightPerRank,
    decisions: () => state.decisions,
    metrics: () => metrics.registry.metrics(),
    metricsContentType: metrics.registry.contentType,
    ready: shared === undefined ? ready : Promise.all([ready, shared.ready]).then(() => {}),
    close: async () => {
      closed = true
      wakeAll()
      await decoder.close()
      await shared?.close()
      await Promise.all([...loops])
      markReady()
    }
  }
}
