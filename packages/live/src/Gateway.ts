/**
 * A gateway as a source: one poll of a gateway's fleet report (SMG `/get_loads` or its
 * `smg_engine_*` page, a Dynamo front end's per-worker gauges, an llm-d endpoint picker's queue
 * gauge) expanded into (worker, dpRank) rows and folded into the router value, workers that the
 * report gains or loses added and removed as workers that come and go (`WorkerSet.ts`). Pure: time
 * is an argument.
 *
 * **What the router routes to**: the workers the gateway names by an http(s) URL (SMG names its
 * workers so). A worker named otherwise (Dynamo's `worker_id`, llm-d's pod name) cannot be
 * reached by the proxy: it is **observe-only**, its rows shown in the gateway's `GatewayStatus`
 * (`/router/ranks` `gateways[].observed`), never routed to; route to such a fleet with `--worker`.
 * A worker also given as a direct source (`--worker`) keeps its own poll: the gateway's rows for
 * it are shown in `observed` and not folded in, so two reports never fight over one rank.
 *
 * @since 0.8.0
 */
import {
  type DecodeError,
  formatDecodeError,
  type LedgerNotice,
  type LedgerReport,
  type RankLoad,
  type RanklessLoad
} from "@loadledger/schema"
import * as Result from "effect/Result"
import { workerKey } from "./internal/workerKey.js"
import type { PollFailure } from "./LastHeard.js"
import { applyPoll, type RouterState } from "./Router.js"
import type { LoadField } from "./Types.js"
import { addWorker, removeWorker } from "./WorkerSet.js"

/**
 * The gateway reports a router can poll, by their `decodeLedger` kind: `smg-loads` (SMG
 * `GET /get_loads`), `smg-metrics` (SMG's metrics page, `smg_engine_*`), `dynamo-metrics` (a
 * Dynamo front end's `/metrics`), `llm-d-metrics` (an llm-d EPP's `/metrics`).
 *
 * @example
 * ```ts
 * import { gatewayKinds } from "@loadledger/live"
 * gatewayKinds // => ["smg-loads", "smg-metrics", "dynamo-metrics", "llm-d-metrics"]
 * ```
 *
 * @category models
 * @since 0.8.0
 */
export const gatewayKinds = ["smg-loads", "smg-metrics", "dynamo-metrics", "llm-d-metrics"] as const

/**
 * One of `gatewayKinds`.
 *
 * @category models
 * @since 0.8.0
 */
export type GatewayKind = (typeof gatewayKinds)[number]

/**
 * A gateway to poll: `url` its base URL, `kind` its report, `intervalMs` / `timeoutMs` as a
 * `SourceSpec`'s, `path` to override the endpoint path (default `/get_loads` for `smg-loads`,
 * `/metrics` for the others).
 *
 * @category models
 * @since 0.8.0
 */
export interface GatewaySpec {
  readonly url: string
  readonly kind: GatewayKind
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly path?: string | undefined
}

/**
 * The URL a gateway is polled at.
 *
 * @example
 * ```ts
 * import { gatewayUrl } from "@loadledger/live"
 * gatewayUrl({ url: "http://smg:30000/", kind: "smg-loads", intervalMs: 250, timeoutMs: 500 }) // => "http://smg:30000/get_loads"
 * gatewayUrl({ url: "http://epp:9090", kind: "llm-d-metrics", intervalMs: 250, timeoutMs: 500 }) // => "http://epp:9090/metrics"
 * ```
 *
 * @category getters
 * @since 0.8.0
 */
export const gatewayUrl = (g: GatewaySpec): string =>
  g.url.replace(/\/+$/, "") + (g.path ?? (g.kind === "smg-loads" ? "/get_loads" : "/metrics"))

/**
 * What the router last made of a gateway's report: the workers it routes to (`workers`, their
 * URLs), the rows of the workers it only observes (`observed`: named by no URL, or polled
 * directly), the rank-less loads (`rankless`, never given an invented rank), notes on what was not
 * folded in (`notes`: a rank beyond the ranks a worker was first seen with), the decoder's notices,
 * and the last failure (fetch or decode; a decode failure's message names the path, e.g.
 * `$.workers[1].details.loads[0].dp_rank`), cleared by the next good poll.
 *
 * @category models
 * @since 0.8.0
 */
export interface GatewayStatus {
  readonly url: string
  readonly kind: GatewayKind
  readonly workers: ReadonlyArray<string>
  readonly observed: ReadonlyArray<{ readonly worker: string; readonly rows: ReadonlyArray<RankLoad> }>
  readonly rankless: ReadonlyArray<RanklessLoad>
  readonly notes: ReadonlyArray<string>
  readonly notices: ReadonlyArray<LedgerNotice>
  readonly failure?: (PollFailure & { readonly atSeconds: number }) | undefined
}

/**
 * A gateway not polled yet.
 *
 * @example
 * ```ts
 * import { gatewayStatus } from "@loadledger/live"
 * gatewayStatus({ url: "http://smg:30000", kind: "smg-loads", intervalMs: 250, timeoutMs: 500 }).workers // => []
 * ```
 *
 * @category constructors
 * @since 0.8.0
 */
export const gatewayStatus = (g: GatewaySpec): GatewayStatus => ({
  url: g.url,
  kind: g.kind,
  workers: [],
  observed: [],
  rankless: [],
  notes: [],
  notices: []
})

const routable = (name: string): string | undefined => {
  try {
    const u = new URL(name)
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "") return undefined
    return u.pathname === "/" && u.search === "" && u.hash === "" ? u.origin : undefined
  } catch {
    return undefined
  }
}

const counts: ReadonlyArray<LoadField> = ["numRunningReqs", "numWaitingReqs"]

/**
 * Fold one poll of gateway `g` into `state`: `polled` the decoded report or why there is none;
 * `direct` the workerKeys of the router's directly polled workers (left to their own polls).
 *
 * - Each worker the report names by an http(s) URL is a worker of the router (added on first
 *   sight with `dpSize` = its highest rank + 1) and takes its rows keyed by (worker, dpRank), as a
 *   worker's own poll would (a rank it does not report this time becomes unknown); two workers'
 *   rank 0 are two ranks, a rank reported twice by one worker is the decoder's `duplicate-rank`.
 * - A worker the last report named and this one does not is removed (`removeWorker`: nothing new
 *   placed on it, its requests in flight counted until they end); one that comes back is
 *   re-admitted with its counts (`addWorker`). A worker with only a rank-less load (SMG's `load`
 *   -1: the gateway got none) is no rank: kept in `rankless`, never given an invented rank 0; one
 *   already routed to keeps its place, its ranks without rows (`not-in-payload`).
 * - A failed poll (or a report that did not decode) is recorded on every worker the gateway
 *   feeds (see `applyPoll`) and in `failure`.
 *
 * @example
 * ```ts
 * import { foldGatewayReport, gatewayStatus, makeRouter, statuses } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * import { decodeLedgerReport } from "@loadledger/schema"
 * import { Result } from "effect"
 * const g = { url: "http://smg:30000", kind: "smg-loads", intervalMs: 250, timeoutMs: 500 } as const
 * const body = JSON.stringify({ workers: [
 *   { worker: "http://a:8000", load: 0, details: { timestamp: "", dp_rank_count: 2, loads: [{ dp_rank: 0, num_running_reqs: 2, num_waiting_reqs: 0 }, { dp_rank: 1, num_running_reqs: 5, num_waiting_reqs: 1 }] } },
 *   { worker: "http://b:8000", load: 0, details: { timestamp: "", dp_rank_count: 1, loads: [{ dp_rank: 0, num_running_reqs: 1, num_waiting_reqs: 0 }] } }
 * ] })
 * const report = decodeLedgerReport(body, "smg-loads")
 * const r = foldGatewayReport(makeRouter(totalRequests, [], { staleAfterSeconds: 5 }), gatewayStatus(g), Result.isSuccess(report) ? Result.succeed(report.success) : Result.fail(report.failure), new Set(), 1)
 * statuses(r.state, 1).map((s) => [s.id, s.row.numRunningReqs]) // => [["http://a:8000@0", 2], ["http://a:8000@1", 5], ["http://b:8000@0", 1]]
 * r.status.workers // => ["http://a:8000", "http://b:8000"]
 * ```
 *
 * @category combinators
 * @since 0.8.0
 */
export const foldGatewayReport = <S>(
  state: RouterState<S>,
  status: GatewayStatus,
  polled: Result.Result<LedgerReport, PollFailure | DecodeError>,
  direct: ReadonlySet<string>,
  now: number
): { readonly state: RouterState<S>; readonly status: GatewayStatus } => {
  if (Result.isFailure(polled)) {
    const f = polled.failure
    const failure: PollFailure =
      f._tag === "PollFailure" ? f : { _tag: "PollFailure", kind: "decode", message: decodeMessage(f) }
    let next = state
    for (const url of status.workers) next = applyPoll(next, url, Result.fail(failure), now)
    return { state: next, status: { ...status, failure: { ...failure, atSeconds: now } } }
  }
  const report = polled.success
  const byWorker = new Map<string, Array<RankLoad>>()
  for (const row of report.rows) {
    const name = row.worker ?? "(no worker)"
    const list = byWorker.get(name)
    if (list === undefined) byWorker.set(name, [row])
    else list.push(row)
  }
  const rankless = report.rankless ?? []
  // a worker already routed to that is named only rank-less keeps its place (still in the
  // gateway's fleet, its ranks without rows); one never seen with ranks gets none invented
  const had = new Set(status.workers.map(workerKey))
  for (const r of rankless) {
    const url = r.worker === undefined ? undefined : routable(r.worker)
    if (url !== undefined && had.has(workerKey(url)) && !byWorker.has(r.worker!)) byWorker.set(r.worker!, [])
  }
  let next = state
  const workers: Array<string> = []
  const observed: Array<{ worker: string; rows: ReadonlyArray<RankLoad> }> = []
  const notes: Array<string> = []
  for (const [name, rows] of byWorker) {
    const url = routable(name)
    if (url === undefined || direct.has(workerKey(url))) {
      observed.push({ worker: name, rows })
      continue
    }
    const key = workerKey(url)
    const dpSize = Math.min(1024, Math.max(1, ...rows.map((r) => r.dpRank + 1)))
    const added = addWorker(next, { url, dpSize }, now)
    if ("_tag" in added) {
      notes.push(`${url}: ${added.message}`)
      continue
    }
    next = withPublished(added, url)
    const have = next.heard.workers.find((w) => workerKey(w.url) === key)
    const size = have?.dpSize ?? dpSize
    const beyond = rows.filter((r) => r.dpRank >= size).map((r) => r.dpRank)
    if (beyond.length > 0)
      notes.push(
        `${url}: dp_rank ${beyond.join(", ")} beyond the ${size} rank(s) it was first seen with (not routed; remove and re-add the worker to grow it)`
      )
    next = applyPoll(next, have?.url ?? url, Result.succeed(rows), now)
    workers.push(have?.url ?? url)
  }
  const kept = new Set(workers.map(workerKey))
  for (const url of status.workers) if (!kept.has(workerKey(url))) next = removeWorker(next, url, now)
  return {
    state: next,
    status: {
      url: status.url,
      kind: status.kind,
      workers,
      observed,
      rankless,
      notes,
      notices: report.notices
    }
  }
}

const decodeMessage = (e: DecodeError): string => `${e._tag}: ${formatDecodeError(e)}`

/** A gateway-fed worker publishes the two counts every gateway report carries. */
const withPublished = <S>(state: RouterState<S>, url: string): RouterState<S> => {
  const published = new Map(state.status.publishedFieldsByWorker ?? [])
  if (published.get(url) === counts) return state
  published.set(url, counts)
  return { ...state, status: { ...state.status, publishedFieldsByWorker: published } }
}
