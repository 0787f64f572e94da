/**
 * A reverse proxy for OpenAI-style completions in front of a `LiveRouter` (node:http).
 *
 * Over 300 lines: one concept (the proxy); the forward / retry / stream-end paths share one request's state and read best in one place.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import {
  Agent,
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse
} from "node:http"
import type { Socket } from "node:net"
import { stringifyJsonSafe } from "@loadledger/schema"
import { checkProxyOptions } from "./internal/checks.js"
import type { LiveRouter } from "./LiveRouter.js"
import type { RouterError } from "./Types.js"

/**
 * Proxy options. Upstream timeouts (ms): `connectTimeoutMs` (TCP connect, default 2 000; a request
 * whose connection never opened is re-placed), `firstByteTimeoutMs` (until the response headers,
 * default 300 000: a non-streamed completion only answers when it is done), `idleStreamTimeoutMs`
 * (longest pause between two body chunks, default 60 000). Passive health check: after
 * `ejectAfterFailures` consecutive failed requests on one worker (an answer >= 500, a timeout, a
 * connection lost mid-request; default 3) the worker is ejected for `ejectForMs` (default 10 000),
 * even if its load endpoint still answers. `maxBodyBytes`: largest request body (default 32 MiB).
 * `port` 0 (default) picks a free port.
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
}

/**
 * A running proxy: its URL and port, and `close` (drops open connections).
 *
 * @category models
 * @since 0.2.0
 */
export interface RouterProxy {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * Approximate prompt tokens of an OpenAI-style body: 1 token per 4 characters of `prompt` or of
 * the messages' text, at least 1.
 *
 * @example
 * ```ts
 * import { estimatePromptTokens } from "@loadledger/live"
 * estimatePromptTokens({ prompt: "hello world!" }) // => 3
 * estimatePromptTokens({ messages: [{ role: "user", content: "hi" }] }) // => 1
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const estimatePromptTokens = (body: unknown): number => {
  const b = body as { prompt?: unknown; messages?: unknown }
  const text =
    typeof b?.prompt === "string"
      ? b.prompt
      : Array.isArray(b?.messages)
        ? b.messages
            .map((m: { content?: unknown }) => (typeof m?.content === "string" ? m.content : ""))
            .join("")
        : ""
  return Math.max(1, Math.ceil(text.length / 4))
}

const ROUTED = new Set(["/v1/completions", "/v1/chat/completions"])
// RFC 9110 section 7.6.1: connection-specific headers are not forwarded by a proxy.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length"
])

const json = (res: ServerResponse, status: number, body: unknown) => {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { "content-type": "application/json" }).end(stringifyJsonSafe(body))
}

class UpstreamTimeout extends Error {
  constructor(
    readonly phase: "connect" | "first-byte" | "idle-stream",
    ms: number
  ) {
    super(`upstream ${phase} timeout after ${ms} ms`)
  }
}

/** The HTTP status of each router refusal: the client's mistakes are 4xx, the fleet's 503. */
const routerErrorStatus: Record<RouterError["reason"], number> = {
  InvalidInput: 400,
  InvalidRoutedRank: 400,
  DuplicateRequestId: 409,
  NoAvailableRanks: 503,
  PolicyError: 503
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
 *   for a request the router refuses as input or a body that is not JSON, 413 above `maxBodyBytes`. `GET /metrics`: the router's Prometheus metrics; `GET /router/ranks`: rank
 *   statuses, in-flight and decision counts as JSON.
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
  const { router } = options
  // free sockets are dropped before the engines' keep-alive timeout (uvicorn: 5 s) can close them
  const agent = new Agent({ keepAlive: true, maxSockets: 512, timeout: 2_000 })
  const connectMs = options.connectTimeoutMs ?? 2_000
  const firstByteMs = options.firstByteTimeoutMs ?? 300_000
  const idleMs = options.idleStreamTimeoutMs ?? 60_000
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024
  const ejectAfter = options.ejectAfterFailures ?? 3
  const ejectForMs = options.ejectForMs ?? 10_000
  const failuresInARow = new Map<string, number>()
  const outcome = (workerUrl: string, failed: boolean) => {
    if (!failed) return void failuresInARow.delete(workerUrl)
    const n = (failuresInARow.get(workerUrl) || 0) + 1
    if (n < ejectAfter) return void failuresInARow.set(workerUrl, n)
    failuresInARow.delete(workerUrl)
    router.eject(workerUrl, ejectForMs, `${n} consecutive failed requests`)
  }

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
    requestId: string,
    inputLength: number,
    attempt: number
  ): void => {
    const decision = router.route({ requestId, inputLength })
    if (decision._tag === "RouterError") {
      json(res, routerErrorStatus[decision.reason], {
        error: { type: "router", reason: decision.reason, message: decision.message }
      })
      return
    }
    let done = false
    const end = (how: "finish" | "abort") => {
      if (done) return
      done = true
      if (how === "finish") router.finish(requestId)
      else router.abort(requestId)
    }
    const headers: Record<string, string | Array<string>> = {}
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v
    headers["x-request-id"] = requestId
    headers["x-data-parallel-rank"] = String(decision.dpRank)
    headers["content-length"] = String(body.length)
    // under the worker's URL, base path kept: `http://h/base` takes `/base/v1/completions`, as its
    // load endpoint is polled at `/base/...` (`new URL(path, base)` dropped the base path)
    const upstream: ClientRequest = httpRequest(new URL(`${decision.workerUrl.replace(/\/+$/, "")}${path}`), {
      method: "POST",
      headers,
      agent
    })
    let connected = false
    let timer: NodeJS.Timeout | undefined
    const arm = (phase: UpstreamTimeout["phase"], ms: number) => {
      if (timer !== undefined) clearTimeout(timer)
      timer = setTimeout(() => upstream.destroy(new UpstreamTimeout(phase, ms)), ms)
    }
    const disarm = () => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    }
    upstream.on("socket", (socket: Socket) => {
      if (!socket.connecting) {
        connected = true
        arm("first-byte", firstByteMs)
        return
      }
      arm("connect", connectMs)
      socket.once("connect", () => {
        connected = true
        arm("first-byte", firstByteMs)
      })
    })
    upstream.on("response", (up) => {
      const outHeaders: Record<string, string | Array<string>> = { "x-loadledger-rank": decision.rankId }
      for (const [k, v] of Object.entries(up.headers))
        if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v
      const status = up.statusCode ?? 502
      outcome(decision.workerUrl, status >= 500)
      res.writeHead(status, outHeaders)
      arm("idle-stream", idleMs)
      up.on("data", () => arm("idle-stream", idleMs))
      up.pipe(res)
      up.on("end", () => {
        disarm()
        end("finish")
      })
      const fail = () => {
        if (!done && !res.destroyed) outcome(decision.workerUrl, true)
        disarm()
        end("abort")
        res.destroy()
      }
      up.on("error", fail)
      up.on("aborted", fail)
    })
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      disarm()
      end("abort")
      if (res.headersSent || res.destroyed) return void res.destroy()
      if (!connected) {
        // not a byte of this request reached the engine: safe to place it elsewhere, once
        router.markUnreachable(decision.workerUrl, `proxy connect: ${err.code ?? err.message}`)
        if (attempt === 0) {
          router.retried(err instanceof UpstreamTimeout ? "connect-timeout" : (err.code ?? "connect-error"))
          return forward(req, res, path, body, requestId, inputLength, 1)
        }
      }
      if (connected) outcome(decision.workerUrl, true)
      json(res, err instanceof UpstreamTimeout ? 504 : 502, {
        error: { type: "upstream", rank: decision.rankId, message: err.message }
      })
    })
    res.on("close", () => {
      if (!done) {
        disarm()
        end("abort")
        upstream.destroy()
      }
    })
    upstream.end(body)
  }

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    if (req.method === "GET" && path === "/metrics") {
      router.metrics().then(
        (text) => res.writeHead(200, { "content-type": router.metricsContentType }).end(text),
        (e) => json(res, 500, { error: String(e) })
      )
      return
    }
    if (req.method === "GET" && path === "/router/ranks") {
      json(res, 200, { ranks: router.ranks(), inflight: router.inflight(), decisions: router.decisions() })
      return
    }
    if (req.method !== "POST" || !ROUTED.has(path)) {
      json(res, 404, { error: { message: `no route for ${req.method} ${req.url}` } })
      return
    }
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
      const body = Buffer.concat(chunks)
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        json(res, 400, { error: { message: "request body is not JSON" } })
        return
      }
      const given = req.headers["x-request-id"]
      const requestId = typeof given === "string" && given.length > 0 ? given : randomUUID()
      // forwarded with its query string (matched on the path alone)
      const q = (req.url ?? "").indexOf("?")
      const target = q >= 0 ? `${path}${(req.url ?? "").slice(q)}` : path
      forward(req, res, target, body, requestId, estimatePromptTokens(parsed), 0)
    })
  }

  const server = createServer(handler)
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
  return {
    url: `http://${host}:${port}`,
    port,
    close: async () => {
      const closed = once(server, "close")
      server.close()
      for (const s of sockets) s.destroy()
      agent.destroy()
      await closed
    }
  }
}
