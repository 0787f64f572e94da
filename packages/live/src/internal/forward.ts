/**
 * One request's trip through the proxy: placed with the router, sent upstream with the chosen
 * rank, streamed back, ended exactly once (`finish` or `abort`), and placed once more when its
 * connection provably never opened. Split from `Proxy.ts`, which owns the server and its options.
 *
 * @internal
 */
import {
  type Agent,
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse
} from "node:http"
import { request as httpsRequest } from "node:https"
import type { Socket } from "node:net"
import type { LiveRouter } from "../LiveRouterConfig.js"
import type { ProxyEvent } from "../ProxyEvent.js"
import { HOP_BY_HOP, json, routerErrorStatus, UpstreamTimeout } from "./proxyHttp.js"

/** What every forwarded request shares. @internal */
export interface ForwardContext {
  readonly router: LiveRouter
  readonly agent: Agent
  readonly connectMs: number
  readonly firstByteMs: number
  readonly idleMs: number
  /** Record one upstream outcome of `workerUrl` (the passive health check). */
  readonly outcome: (workerUrl: string, failed: boolean) => void
  readonly log: ((e: ProxyEvent) => void) | undefined
}

/** One request as it entered the proxy. @internal */
export interface Incoming {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** Path with its query string, as forwarded under the worker's base URL. */
  readonly path: string
  readonly body: Buffer
  readonly requestId: string
  readonly inputLength: number
}

interface Target {
  readonly send: typeof httpRequest
  readonly hostname: string
  readonly port: string
  readonly base: string
}

// a worker URL is parsed once, not on every request
const targets = new Map<string, Target>()
const targetOf = (workerUrl: string): Target => {
  let t = targets.get(workerUrl)
  if (t === undefined) {
    const u = new URL(workerUrl)
    t = {
      send: u.protocol === "https:" ? (httpsRequest as unknown as typeof httpRequest) : httpRequest,
      hostname: u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port,
      // under the worker's URL, base path kept: `http://h/base` takes `/base/v1/completions`
      base: u.pathname.replace(/\/+$/, "")
    }
    if (targets.size > 4096) targets.clear()
    targets.set(workerUrl, t)
  }
  return t
}

/** Place `inc` with the router and forward it; `attempt` 1 is the one re-placement. @internal */
export const forward = (ctx: ForwardContext, inc: Incoming, attempt: number): void => {
  const { router, log } = ctx
  const { req, res, requestId } = inc
  const decision = router.route({ requestId, inputLength: inc.inputLength })
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
  const inHeaders = req.headers
  for (const k in inHeaders) {
    const v = inHeaders[k]
    if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v
  }
  headers["x-request-id"] = requestId
  headers["x-data-parallel-rank"] = String(decision.dpRank)
  headers["content-length"] = String(inc.body.length)
  const t = targetOf(decision.workerUrl)
  const upstream: ClientRequest = t.send({
    hostname: t.hostname,
    port: t.port,
    path: `${t.base}${inc.path}`,
    method: "POST",
    headers,
    agent: ctx.agent
  })
  let connected = false
  let timer: NodeJS.Timeout | undefined
  const rearm = (phase: UpstreamTimeout["phase"], ms: number) => {
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
      rearm("first-byte", ctx.firstByteMs)
      return
    }
    rearm("connect", ctx.connectMs)
    socket.once("connect", () => {
      connected = true
      rearm("first-byte", ctx.firstByteMs)
    })
  })
  upstream.on("response", (up) => {
    const outHeaders: Record<string, string | Array<string>> = { "x-loadledger-rank": decision.rankId }
    const upHeaders = up.headers
    for (const k in upHeaders) {
      const v = upHeaders[k]
      if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v
    }
    // the body passes through byte for byte: a length the engine gave stays valid, and answering
    // with it (not re-chunked) ends the answer in the same write as its last bytes
    const length = upHeaders["content-length"]
    if (length !== undefined && upHeaders["transfer-encoding"] === undefined)
      outHeaders["content-length"] = length
    const status = up.statusCode ?? 502
    ctx.outcome(decision.workerUrl, status >= 500)
    if (status >= 500) log?.({ event: "upstream-failed", requestId, rank: decision.rankId, status })
    res.writeHead(status, outHeaders)
    rearm("idle-stream", ctx.idleMs)
    // one timer per request, pushed back on every chunk (refresh, not a new timer per chunk)
    up.on("data", () => timer?.refresh())
    up.pipe(res)
    up.on("end", () => {
      disarm()
      end("finish")
    })
    const fail = () => {
      if (!done && !res.destroyed) {
        ctx.outcome(decision.workerUrl, true)
        log?.({
          event: "upstream-failed",
          requestId,
          rank: decision.rankId,
          error: "connection lost mid-answer"
        })
      }
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
        const reason = err instanceof UpstreamTimeout ? "connect-timeout" : (err.code ?? "connect-error")
        router.retried(reason)
        log?.({ event: "retried", requestId, rank: decision.rankId, reason })
        return forward(ctx, inc, 1)
      }
    }
    if (connected) ctx.outcome(decision.workerUrl, true)
    log?.({ event: "upstream-failed", requestId, rank: decision.rankId, error: err.message })
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
  upstream.end(inc.body)
}
