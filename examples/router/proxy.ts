/**
 * A reverse proxy for OpenAI-style `/v1/completions` and `/v1/chat/completions` that places each
 * request with a `LiveRouter` and streams the upstream response through.
 *
 * - The chosen DP rank goes upstream in the `X-data-parallel-rank` header (vLLM's per-request DP
 *   rank header); the request id in `X-Request-Id` (taken from the client or generated).
 * - In-flight bookkeeping: `finish` when the upstream response ends, `abort` when the client goes
 *   away or the upstream fails; exactly once per admitted request.
 * - A connection refused by the upstream (nothing was sent) marks that worker unreachable and the
 *   request is placed again, up to `connectRetries` times; any later failure is a 502, never a
 *   resend, so no request is sent twice.
 * - `GET /metrics`: the router's Prometheus metrics; `GET /router/ranks`: rank statuses as JSON.
 */
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse
} from "node:http"
import type { Socket } from "node:net"
import type { LiveRouter } from "@loadledger/live"
import { estimateTokens } from "./fakeWorker.js"

export interface ProxyOptions {
  readonly router: LiveRouter
  readonly port?: number
  readonly host?: string
  /** Placement attempts after a refused upstream connection (default 2). */
  readonly connectRetries?: number
  /** Bound on waiting for upstream response headers (default 600 000 ms). */
  readonly upstreamTimeoutMs?: number
  readonly maxBodyBytes?: number
}

export interface RouterProxy {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
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
  "upgrade"
])

const json = (res: ServerResponse, status: number, body: unknown) => {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

/** Start the proxy on `host:port` (default 127.0.0.1, ephemeral port). */
export const startProxy = async (options: ProxyOptions): Promise<RouterProxy> => {
  const { router } = options
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })
  const retries = options.connectRetries ?? 2
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? 600_000
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024

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
      json(res, 503, { error: { type: "router", reason: decision.reason, message: decision.message } })
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
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !["host", "connection", "content-length", "transfer-encoding"].includes(k))
        headers[k] = v
    }
    headers["x-request-id"] = requestId
    headers["x-data-parallel-rank"] = String(decision.dpRank)
    headers["content-length"] = String(body.length)
    const upstream = httpRequest(new URL(path, decision.workerUrl), { method: "POST", headers, agent })
    const timer = setTimeout(() => upstream.destroy(new Error("upstream timeout")), upstreamTimeoutMs)
    upstream.on("response", (up) => {
      clearTimeout(timer)
      const outHeaders: Record<string, string | Array<string>> = { "x-loadledger-rank": decision.rankId }
      for (const [k, v] of Object.entries(up.headers))
        if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v
      res.writeHead(up.statusCode ?? 502, outHeaders)
      up.pipe(res)
      up.on("end", () => end("finish"))
      up.on("error", () => {
        end("abort")
        res.destroy()
      })
      up.on("aborted", () => {
        end("abort")
        res.destroy()
      })
    })
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      end("abort")
      if (err.code === "ECONNREFUSED" && !res.headersSent && !res.destroyed) {
        router.markUnreachable(decision.workerUrl, `proxy connect: ${err.message}`)
        if (attempt < retries) return forward(req, res, path, body, requestId, inputLength, attempt + 1)
      }
      if (!res.destroyed)
        json(res, err.message === "upstream timeout" ? 504 : 502, { error: { message: err.message } })
    })
    res.on("close", () => {
      if (!done) {
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
    if (req.method !== "POST" || !ROUTED.has(req.url ?? "")) {
      json(res, 404, { error: { message: `no route for ${req.method} ${req.url}` } })
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > maxBody) req.destroy()
      else chunks.push(c)
    })
    req.on("end", () => {
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
      forward(req, res, path, body, requestId, estimateTokens(parsed), 0)
    })
  }

  const server = createServer(handler)
  const sockets = new Set<Socket>()
  server.on("connection", (s) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  server.listen(options.port ?? 0, options.host ?? "127.0.0.1")
  await once(server, "listening")
  const addr = server.address()
  const port = addr !== null && typeof addr === "object" ? addr.port : 0
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
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
