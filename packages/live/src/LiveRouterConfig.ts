/**
 * What `startLiveRouter` takes (`LiveRouterConfig`) and gives (`LiveRouter`).
 *
 * @since 0.4.0
 */
import type { Policy, RouteRequest } from "@loadledger/policies"
import type { LedgerKind } from "@loadledger/schema"
import type { SharedBookings } from "./Bookings.js"
import type { GatewaySpec, GatewayStatus } from "./Gateway.js"
import type { Decision } from "./Route.js"
import type { RouterOptions } from "./Router.js"
import type { SourceSpec } from "./Source.js"
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
 * - `gateways` (default none): gateways whose fleet report feeds the router (see `Gateway.ts`:
 *   the workers they name by URL are routed to, added and removed as the report changes; the
 *   others observed only), each a `GatewaySpec` checked as a source is (`gateways[0].kind`);
 *   `onGateway(status, added, removed)` is called after each of their polls.
 * - `diagnosisWindowSeconds` (default 300; since 0.7.0): the sliding window of polled loads the
 *   `/metrics` page's diagnosis (`loadledger_rank_diagnosis{worker,dp_rank,kind}`) is computed over.
 * - `bookings` (default none: this replica alone): the store replicas share their placements
 *   through (`SharedBookings`, e.g. `startRedisBookings`). Each placement and release is published;
 *   the other replicas' are held in `inflight` (as `remote:<replica>:<id>`) and charged to the policy
 *   as requests pinned to their rank, until released. A lost store drops them: the replica routes
 *   on its own counts, `loadledger_router_bookings_connected` is 0, and `onBookings(false, why)` is
 *   called; on reconnection the others' bookings are read again (`onBookings(true)`). With shared
 *   bookings the counts are global: leave `clientCount` unset. `ready` waits for the first connection.
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
 * (`markUnreachable`) excludes the worker at once. With `overloadBound`, a rank holding that many
 * requests in flight is skipped while another is under it, and `route` answers `Overloaded` (the
 * proxy: HTTP 503 with `reason: "Overloaded"`) when every usable rank is over it.
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
  readonly diagnosisWindowSeconds?: number | undefined
  readonly bookings?: SharedBookings | undefined
  readonly onBookings?: ((connected: boolean, message?: string) => void) | undefined
  readonly gateways?: ReadonlyArray<GatewaySpec> | undefined
  readonly onGateway?:
    | ((status: GatewayStatus, added: ReadonlyArray<string>, removed: ReadonlyArray<string>) => void)
    | undefined
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
 * out for `holdMs` or until its first healthy poll after the ejection (a passive health check); `addSource` starts polling a
 * new worker (its ranks after the others', unknown until its first poll; a bad source is the
 * `RouterError` naming `source.<field>`, a URL already polled is left as it is) and `removeSource`
 * stops one (nothing new is placed on it; its requests in flight stay counted until they end,
 * then its ranks are dropped: see `removeWorker`, `compactWorkers`); `retried` counts a
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
  readonly addSource: (source: SourceSpec) => RouterError | undefined
  readonly removeSource: (url: string) => boolean
  readonly ranks: () => ReadonlyArray<RankStatus>
  /** The gateway sources' last reports as folded (see `GatewayStatus`), in config order. */
  readonly gateways: () => ReadonlyArray<GatewayStatus>
  readonly inflight: () => ReadonlyArray<number>
  readonly decisions: () => ReadonlyArray<number>
  readonly metrics: () => Promise<string>
  readonly metricsContentType: string
  readonly ready: Promise<void>
  readonly close: () => Promise<void>
  readonly error?: RouterError | undefined
}
