/**
 * `loadledger serve` as a library call: a live router and its proxy started from checked
 * `ServeArgs`, with structured logs of what an operator watches (listening, every rank's change of
 * condition, upstream failures, ejections, drain) and a graceful drain.
 *
 * @since 0.4.0
 */
import type { Policy } from "@loadledger/policies"
import type { SharedBookings } from "./Bookings.js"
import { watchWorkerEndpointSlices } from "./K8sWorkers.js"
import { startLiveRouter } from "./LiveRouter.js"
import type { LiveRouter } from "./LiveRouterConfig.js"
import { type RouterProxy, startProxy } from "./Proxy.js"
import type { ProxyEvent } from "./ProxyEvent.js"
import type { ServeArgs } from "./ServeArgs.js"
import type { SourceSpec } from "./Source.js"
import { type WorkerWatch, watchWorkerDns, watchWorkerFile } from "./WorkerWatch.js"

/**
 * One structured log record: `time` (ISO 8601), `level`, `msg` (the event: `listening`, `rank`,
 * `upstream-failed`, `retried`, `ejected`, `request`, `draining`, `drained`, `bookings`), and the
 * event's fields. `serve` prints each as one JSON line on stdout.
 *
 * @category models
 * @since 0.4.0
 */
export interface ServeLogRecord {
  readonly time: string
  readonly level: "info" | "warn" | "error"
  readonly msg: string
  readonly [field: string]: unknown
}

/**
 * A running `serve`: its URL, router and proxy; `drain(ms)` (default: `args.drainMs`) stops taking
 * requests, lets those in flight end (streams included) within `ms`, cuts the rest, stops polling,
 * and resolves with the number cut; `close` stops at once.
 *
 * @category models
 * @since 0.4.0
 */
export interface RunningServe {
  readonly url: string
  readonly router: LiveRouter
  readonly proxy: RouterProxy
  readonly drain: (timeoutMs?: number) => Promise<number>
  readonly close: () => Promise<void>
}

const levelOf = (e: ProxyEvent): ServeLogRecord["level"] =>
  e.event === "upstream-failed" || e.event === "retried" || e.event === "ejected" ? "warn" : "info"

/**
 * Start a router and its proxy from `args` with `policy` (built by the caller: `findPolicy(args.policy)`
 * with the replica and step-cost options). `log` receives every record (default: none);
 * `bookings`, when given, is the store replicas share their placements through (see
 * `SharedBookings`; `args.bookings` names it for the CLI).
 *
 * **Errors**: rejects, after stopping the router, when the proxy cannot listen (`EADDRINUSE`,
 * `EACCES`: the listen error) or when the router or proxy refuses an option (a `RouterError`).
 *
 * @example
 * ```ts
 * import { parseServeArgs, startServe, type ServeArgs } from "@loadledger/live"
 * import { startFakeEngine } from "@loadledger/live/testing"
 * import { totalRequests } from "@loadledger/policies"
 * const engine = await startFakeEngine({ dpSize: 2 })
 * const args = parseServeArgs(["--worker", engine.url, "--dp", "2", "--port", "0"]) as ServeArgs
 * const s = await startServe(args, totalRequests)
 * await s.router.ready
 * const res = await fetch(`${s.url}/v1/completions`, { method: "POST", body: JSON.stringify({ prompt: "hi" }) })
 * res.headers.get("x-loadledger-rank") // => `${engine.url}@0`
 * const ready = await fetch(`${s.url}/readyz`)
 * ready.status // => 200
 * await s.drain(1000) // => 0
 * await engine.close()
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const startServe = async <S>(
  args: ServeArgs,
  policy: Policy<S>,
  options: {
    readonly log?: ((record: ServeLogRecord) => void) | undefined
    readonly bookings?: SharedBookings | undefined
  } = {}
): Promise<RunningServe> => {
  const write = options.log
  const log = (level: ServeLogRecord["level"], msg: string, fields: Record<string, unknown> = {}) =>
    write?.({ time: new Date().toISOString(), level, msg, ...fields })
  const gatewayFailures = new Map<string, string>()
  const source = (url: string): SourceSpec => ({
    url,
    dpSize: args.dp,
    kind: args.source,
    intervalMs: args.intervalMs,
    timeoutMs: args.timeoutMs
  })
  const router = startLiveRouter({
    sources: args.workers.map(source),
    policy,
    staleAfterSeconds: args.staleMs / 1000,
    requiredFields: args.requiredFields,
    clientCount: args.replicas,
    clientIndex: args.replicaIndex,
    overloadBound: args.overloadBound,
    decodeBudgetMs: args.decodeBudgetMs,
    processMetrics: true,
    gateways: args.gateways.map((g) => ({ ...g, intervalMs: args.intervalMs, timeoutMs: args.timeoutMs })),
    onGateway: (status, added, removed) => {
      for (const worker of added) log("info", "worker-added", { worker, from: `gateway ${status.url}` })
      for (const worker of removed) log("info", "worker-removed", { worker, from: `gateway ${status.url}` })
      const f = status.failure
      const seenFailure = f === undefined ? "" : `${f.kind}: ${f.message}`
      if (gatewayFailures.get(status.url) !== seenFailure) {
        gatewayFailures.set(status.url, seenFailure)
        if (f !== undefined) log("warn", "gateway", { gateway: status.url, kind: f.kind, message: f.message })
      }
    },
    bookings: options.bookings,
    onBookings: (connected, message) =>
      log(connected ? "info" : "warn", "bookings", {
        connected,
        ...(message === undefined ? {} : { message })
      })
  })
  if (router.error !== undefined) throw router.error

  let proxy: RouterProxy
  try {
    proxy = await startProxy({
      router,
      port: args.port,
      host: args.host,
      connectTimeoutMs: args.connectTimeoutMs,
      firstByteTimeoutMs: args.firstByteTimeoutMs,
      idleStreamTimeoutMs: args.idleTimeoutMs,
      ejectAfterFailures: args.ejectAfter,
      ejectForMs: args.ejectMs,
      accessLog: args.accessLog,
      log: write === undefined ? undefined : (e) => log(levelOf(e), e.event, { ...e, event: undefined })
    })
  } catch (e) {
    await router.close()
    throw e
  }
  // workers that come and go: the static --worker set plus each watch's latest set
  const watched = new Map<string, ReadonlyArray<string>>()
  let current = new Set(args.workers)
  const reconcile = (from: string, urls: ReadonlyArray<string>) => {
    watched.set(from, urls)
    const want = new Set([...args.workers, ...[...watched.values()].flat()])
    for (const url of want)
      if (!current.has(url)) {
        const bad = router.addSource(source(url))
        log(bad === undefined ? "info" : "warn", "worker-added", {
          worker: url,
          from,
          ...(bad ? { error: bad.message } : {})
        })
      }
    for (const url of current)
      if (!want.has(url)) {
        router.removeSource(url)
        log("info", "worker-removed", { worker: url, from })
      }
    current = want
  }
  const watches: Array<WorkerWatch> = []
  const watchError = (from: string) => (message: string) => log("warn", "workers", { from, message })
  if (args.workersFile !== undefined)
    watches.push(
      watchWorkerFile(
        args.workersFile,
        (urls) => reconcile("file", urls),
        watchError("file"),
        Math.min(1000, args.intervalMs * 4)
      )
    )
  if (args.workersDns !== undefined)
    watches.push(
      watchWorkerDns(
        args.workersDns.name,
        args.workersDns.port,
        (urls) => reconcile("dns", urls),
        watchError("dns"),
        Math.max(1000, args.intervalMs * 4)
      )
    )
  if (args.workersK8s !== undefined)
    watches.push(
      watchWorkerEndpointSlices(args.workersK8s, (urls) => reconcile("k8s", urls), watchError("k8s"))
    )
  // every change of a rank's condition, one record each (the first poll's included)
  const seen = new Map<string, string>()
  const watch = () => {
    for (const r of router.ranks()) {
      const now = `${r.condition}/${r.reason ?? ""}`
      if (seen.get(r.id) === now) continue
      seen.set(r.id, now)
      log(r.condition === "unhealthy" ? "warn" : "info", "rank", {
        rank: r.id,
        condition: r.condition,
        ...(r.reason === undefined ? {} : { reason: r.reason }),
        ...(r.condition === "known" ? {} : { message: r.row.unknown?.message })
      })
    }
  }
  const watcher = setInterval(watch, args.intervalMs)
  watcher.unref()
  void router.ready.then(watch)
  log("info", "listening", {
    url: proxy.url,
    policy: policy.name,
    ranks: router.ranks().length,
    bookings: args.bookings === undefined ? "in-process" : "shared",
    ...(args.config === undefined ? {} : { config: args.config })
  })
  const stop = async (cut: () => Promise<number>): Promise<number> => {
    clearInterval(watcher)
    for (const w of watches) w.close()
    const left = await cut()
    await router.close()
    return left
  }
  return {
    url: proxy.url,
    router,
    proxy,
    drain: (ms = args.drainMs) => stop(() => proxy.drain(ms)),
    close: async () => {
      await stop(async () => {
        await proxy.close()
        return 0
      })
    }
  }
}
