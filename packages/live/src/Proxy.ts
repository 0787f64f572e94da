/**
 * A reverse proxy for OpenAI-style completions in front of a `LiveRouter` (node:http): the server,
 * its health, readiness and drain; one request's trip upstream is `internal/forward.ts`.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { Agent, createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { checkProxyOptions } from "./internal/checks.js"
import { type ForwardContext, forward } from "./internal/forward.js"
import { json, ROUTED } from "./internal/proxyHttp.js"
import type { LiveRouter } from "./LiveRouterConfig.js"
import { estimatePromptTokens } from "./PromptTokens.js"
import type { ProxyEvent } from "./ProxyEvent.js"

/**
 * Proxy options. Upstream timeouts (ms): `connectTimeoutMs` (TCP connect, default 2 000; a request
 * whose connection never opened is re-placed), `firstByteTimeoutMs` (until the response headers,
 * default 300 000: a non-streamed completion only answers when it is done), `idleStreamTimeoutMs`
 * (longest pause between two body chunks, default 60 000). Passive health check: after
 * `ejectAfterFailures` consecutive failed requests on one worker (an answer >= 500, a timeout, a
 * connection lost mid-request; a 4xx never counts: sgl-project/sglang #25811; default 3) the worker
 * is ejected for `ejectForMs` (default 10 000) or until its first healthy poll after that, if
 * sooner (a mark ends with the first evidence that clears it: sgl-project/sglang #31206). `maxBodyBytes`: largest request body (default 32 MiB).
 * `port` 0 (default) picks a free port. `log`: called with each `ProxyEvent` (failures, retries,
 * ejections, drain); `accessLog` (default false) adds one `request` event per request.
 *
 * **Checked up front**, each absent or as follows: `router` a `LiveRouter` that `startLiveRouter`
 * did not refuse; `port` an integer from 0 to 65535; `host` a non-empty string; the three timeouts
 * from 1 to 2,147,483,647 ms (node's longest timer); `ejectAfterFailures` an integer >= 1;
 * `ejectForMs` a number >= 0 (`Infinity`: for good); `maxBodyBytes` an integer >= 1. See
 * `startProxy` for what a refused value does.
 *
 * @category models
 * @since 0.2.0
 */
export interface ProxyOptions {
  readonly router: LiveRouter
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly connectTimeoutMs?: number | undefined
  readonly firstByteTimeoutMs?: number | undefined
  readonly idleStreamTimeoutMs?: number | undefined
  readonly ejectAfterFailures?: number | undefined
  readonly ejectForMs?: number | undefined
  readonly maxBodyBytes?: number | undefined
  readonly log?: ((event: ProxyEvent) => void) | undefined
  readonly accessLog?: boolean | undefined
}

/**
 * A running proxy: its URL and port; `inflight` (requests being served now); `drain(ms)` (graceful:
 * see `startProxy`; resolves with the number of requests cut when `ms` ran out, 0 when all ended);
 * `close` (drops open connections at once).
 *
 * @category models
 * @since 0.2.0
 */
export interface RouterProxy {
  readonly url: string
  readonly port: number
  readonly inflight: () => number
  readonly drain: (timeoutMs: number) => Promise<number>
  readonly close: () => Promise<void>
}

/**
 * Start a reverse proxy for `POST /v1/completions` and `/v1/chat/completions` that places each
 * request with `router` and streams the upstream answer through.
 *
 * - The chosen DP rank goes upstream in `X-Data-Parallel-Rank` (read by SGLang's OpenAI server,
 *   `python/sglang/srt/entrypoints/openai/serving_base.py`, and vLLM's `X-data-parallel-rank`);
 *   the request id in `X-Request-Id` (the client's, or a fresh UUID); every response carries
 *   `x-loadledger-rank: <worker url>@<dp rank>`.
 * - In-flight bookkeeping: `finish` when the upstream response ends, `abort` when the client goes
 *   away or the upstream fails; exactly once per admitted request.
 * - **Never sent twice, retried once when provably unsent**: a request whose upstream connection
 *   never opened (refused, reset or timed out while connecting: not a byte reached the engine)
 *   marks the worker unreachable and is placed once more, on another rank. Once the connection
 *   opened, any failure is answered (502, or 504 on a timeout) and never resent.
 * - Answers 503 when the router has no healthy rank (or its policy fails), 409 for an
 *   `X-Request-Id` already in flight (a client error: retrying it the same way fails again), 400
 *   for a request the router refuses as input or a body that is not JSON, 413 above `maxBodyBytes`.
 * - `GET /metrics`: the router's Prometheus metrics; `GET /router/ranks`: rank statuses, in-flight
 *   and decision counts as JSON; `GET /healthz`: 200 while the process serves (liveness);
 *   `GET /readyz`: 200 once every source was polled once and some rank is not unhealthy, 503
 *   (with the reason) before, while no rank can take a request, and while draining (readiness).
 * - **Graceful shutdown**: `drain(ms)` stops accepting connections, answers new requests on open
 *   ones 503 (`connection: close`), waits up to `ms` for the requests in flight (streams included)
 *   to end, then cuts what is left and closes; it resolves with how many it cut. `close` cuts at once.
 *
 * **When to use**: in front of SGLang or vLLM workers, or as the model for your own gateway.
 *
 * **Errors**: the promise rejects, before anything listens, with a `RouterError` `InvalidInput`
 * naming the first option at fault (see `ProxyOptions`: `port`, `connectTimeoutMs`, `router.route`,
 * ...), or with the router's own `error` when `startLiveRouter` refused it; and with the listen
 * error (e.g. `EADDRINUSE`) when the port cannot be bound. Why a rejection: it is how this function
 * already says it could not start a proxy, and callers keep their `await startProxy(...)`.
 *
 * @example
 * ```ts
 * import { startLiveRouter, startProxy } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const router = startLiveRouter({ sources: [], policy: totalRequests, staleAfterSeconds: 1 })
 * const proxy = await startProxy({ router })
 * const res = await fetch(`${proxy.url}/v1/completions`, { method: "POST", body: "{}" })
 * res.status // => 503
 * await proxy.close()
 * // a bad option is refused before anything listens, naming the field
 * const refused = await startProxy({ router, port: 70000 }).catch((e) => e)
 * refused.message // => "port must be an integer from 0 to 65535, got 70000"
 * await router.close()
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const startProxy = async (options: ProxyOptions): Promise<RouterProxy> => {
  const refused = checkProxyOptions(options)
  if (refused !== undefined) return Promise.reject(refused)
  const { router, log } = options
  // free sockets are dropped before the engines' keep-alive timeout (uvicorn: 5 s) can close them
  // noDelay: a request or answer in two segments is not held back by Nagle's algorithm waiting
  // for the peer's delayed ACK (up to 40 ms on Linux)
  const agent = new Agent({ keepAlive: true, maxSockets: 512, timeout: 2_000, noDelay: true })
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024
  const ejectAfter = options.ejectAfterFailures ?? 3
  const ejectForMs = options.ejectForMs ?? 10_000
  const failuresInARow = new Map<string, number>()
  const ctx: ForwardContext = {
    router,
    agent,
    connectMs: options.connectTimeoutMs ?? 2_000,
    firstByteMs: options.firstByteTimeoutMs ?? 300_000,
    idleMs: options.idleStreamTimeoutMs ?? 60_000,
    log,
    outcome: (workerUrl, failed) => {
      if (!failed) return void failuresInARow.delete(workerUrl)
      const n = (failuresInARow.get(workerUrl) || 0) + 1
      if (n < ejectAfter) return void failuresInARow.set(workerUrl, n)
      failuresInARow.delete(workerUrl)
      router.eject(workerUrl, ejectForMs, `${n} consecutive failed requests`)
      log?.({ event: "ejected", worker: workerUrl, failures: n })
    }
  }
  const accessLog = options.accessLog === true && log !== undefined
  let polledOnce = false
  void router.ready.then(() => {
    polledOnce = true
  })
  let draining = false
  let active = 0
  let idle: (() => void) | undefined

  const readiness = (): { ready: boolean; reason?: string } => {
    if (draining) return { ready: false, reason: "draining" }
    if (!polledOnce) return { ready: false, reason: "first polls not done" }
    const ranks = router.ranks()
    if (ranks.length === 0) return { ready: false, reason: "no workers" }
    return ranks.some((r) => r.condition !== "unhealthy")
      ? { ready: true }
      : { ready: false, reason: "every rank is unhealthy" }
  }

  const routed = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const started = accessLog ? performance.now() : 0
    active++
    res.on("close", () => {
      active--
      if (accessLog)
        log!({
          event: "request",
          requestId: String(res.getHeader("x-request-id") ?? ""),
          path,
          status: res.headersSent ? res.statusCode : 0,
          rank: res.getHeader("x-loadledger-rank") as string | undefined,
          ms: performance.now() - started
        })
      if (active === 0 && idle !== undefined) idle()
    })
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > maxBody) tooLarge = true
      else chunks.push(c)
    })
    req.on("end", () => {
      if (tooLarge) return json(res, 413, { error: { message: `request body above ${maxBody} bytes` } })
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        json(res, 400, { error: { message: "request body is not JSON" } })
        return
      }
      const given = req.headers["x-request-id"]
      const requestId = typeof given === "string" && given.length > 0 ? given : randomUUID()
      if (accessLog) res.setHeader("x-request-id", requestId)
      // forwarded with its query string (matched on the path alone)
      const url = req.url ?? ""
      const q = url.indexOf("?")
      const target = q >= 0 ? `${path}${url.slice(q)}` : path
      forward(ctx, { req, res, path: target, body, requestId, inputLength: estimatePromptTokens(parsed) }, 0)
    })
  }

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const path = q >= 0 ? url.slice(0, q) : url
    if (req.method === "POST" && ROUTED.has(path)) {
      if (draining) {
        req.resume()
        return json(
          res,
          503,
          { error: { type: "router", reason: "Draining", message: "the router is shutting down" } },
          { connection: "close" }
        )
      }
      return routed(req, res, path)
    }
    if (req.method === "GET") {
      if (path === "/healthz") return json(res, 200, { status: "ok" })
      if (path === "/readyz") {
        const r = readiness()
        return json(res, r.ready ? 200 : 503, r)
      }
      if (path === "/metrics") {
        router.metrics().then(
          (text) => res.writeHead(200, { "content-type": router.metricsContentType }).end(text),
          (e) => json(res, 500, { error: String(e) })
        )
        return
      }
      if (path === "/router/ranks")
        return json(res, 200, {
          ranks: router.ranks(),
          inflight: router.inflight(),
          decisions: router.decisions(),
          gateways: router.gateways?.() ?? []
        })
    }
    json(res, 404, { error: { message: `no route for ${req.method} ${req.url}` } })
  }

  const server = createServer({ noDelay: true }, handler)
  const sockets = new Set<Socket>()
  server.on("connection", (s) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port === undefined ? 0 : options.port, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const addr = server.address()
  const port = addr !== null && typeof addr === "object" ? addr.port : 0
  const closed = once(server, "close")
  const close = async () => {
    draining = true
    server.close()
    for (const s of sockets) s.destroy()
    agent.destroy()
    await closed
  }
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    inflight: () => active,
    drain: async (timeoutMs) => {
      draining = true
      log?.({ event: "draining", inflight: active })
      server.close()
      server.closeIdleConnections()
      if (active > 0)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, timeoutMs)
          idle = () => {
            clearTimeout(t)
            resolve()
          }
        })
      const left = active
      await close()
      log?.({ event: "drained", left })
      return left
    },
    close
  }
}
