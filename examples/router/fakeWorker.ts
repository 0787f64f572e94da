/**
 * A loopback test worker that behaves like an SGLang or vLLM server for the router's purposes:
 * OpenAI-style completions (streamed or not, with latency) and a load endpoint that serves either
 * live numbers (current-era SGLang `/v1/loads` JSON built from the requests it is serving), or a
 * verbatim payload file from `fixtures/payloads/`, or a fault (500, hang, garbage).
 *
 * Used by the example's `workers.ts`, the tests in `packages/live/test/` and `bench/live.ts`.
 * Binds 127.0.0.1 only.
 */
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"

/** What the load endpoint answers. */
export type LoadsMode =
  | { readonly _tag: "live" }
  | { readonly _tag: "file"; readonly path: string; readonly contentType?: string }
  | { readonly _tag: "body"; readonly body: string; readonly contentType?: string }
  | { readonly _tag: "status"; readonly status: number }
  | { readonly _tag: "hang" }

/** What completions do. */
export type CompletionMode = "ok" | "500" | "hang"

export interface FakeWorkerOptions {
  readonly dpSize?: number
  /** Port to bind; 0 (default) picks an ephemeral port. */
  readonly port?: number
  /** Paths that answer with the load payload (default `/v1/loads` and `/metrics`). */
  readonly loadPaths?: ReadonlyArray<string>
  readonly loads?: LoadsMode
  readonly completions?: CompletionMode
  /** Delay before the first byte of a completion. */
  readonly latencyMs?: number
  /** Streamed chunks per response and the pause between them. */
  readonly chunks?: number
  readonly chunkDelayMs?: number
}

export interface Received {
  readonly requestId: string
  readonly path: string
  readonly dpRank: number
}

export interface FakeWorker {
  readonly url: string
  readonly port: number
  /** Every completion request received since the last (re)start, in arrival order. */
  readonly received: () => ReadonlyArray<Received>
  /** Completions in progress per rank right now. */
  readonly running: () => ReadonlyArray<number>
  readonly set: (options: Partial<FakeWorkerOptions>) => void
  /** Close (dropping open connections) and listen again on the same port with counters reset. */
  readonly restart: () => Promise<void>
  /** Stop listening (connections dropped); `restart` brings it back. */
  readonly stop: () => Promise<void>
  readonly close: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Approximate prompt tokens: 1 token per 4 characters of prompt or message text. */
export const estimateTokens = (body: unknown): number => {
  const b = body as { prompt?: unknown; messages?: ReadonlyArray<{ content?: unknown }> }
  const text =
    typeof b?.prompt === "string"
      ? b.prompt
      : Array.isArray(b?.messages)
        ? b.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("")
        : ""
  return Math.max(1, Math.ceil(text.length / 4))
}

/** Start a fake worker on 127.0.0.1. */
export const startFakeWorker = async (initial: FakeWorkerOptions = {}): Promise<FakeWorker> => {
  let opts: FakeWorkerOptions = {
    dpSize: 1,
    loads: { _tag: "live" },
    completions: "ok",
    chunks: 3,
    ...initial
  }
  const dpSize = () => opts.dpSize ?? 1
  let received: Array<Received> = []
  let running: Array<number> = []
  let tokens: Array<number> = []
  let generation = 0
  const reset = () => {
    received = []
    running = Array.from({ length: dpSize() }, () => 0)
    tokens = Array.from({ length: dpSize() }, () => 0)
    generation += 1
  }
  reset()
  const sockets = new Set<Socket>()

  const liveLoads = () => {
    const now = Date.now() / 1000
    return JSON.stringify({
      timestamp: new Date().toISOString(),
      version: "fake-worker",
      loads: running.map((r, dpRank) => ({
        dp_rank: dpRank,
        timestamp: now,
        num_running_reqs: r,
        num_waiting_reqs: 0,
        num_used_tokens: tokens[dpRank],
        num_total_tokens: tokens[dpRank],
        token_usage: 0
      }))
    })
  }

  const serveLoads = (res: ServerResponse) => {
    const m = opts.loads ?? { _tag: "live" }
    switch (m._tag) {
      case "live":
        res.writeHead(200, { "content-type": "application/json" }).end(liveLoads())
        return
      case "file":
        res.writeHead(200, { "content-type": m.contentType ?? "text/plain" }).end(readFileSync(m.path))
        return
      case "body":
        res.writeHead(200, { "content-type": m.contentType ?? "text/plain" }).end(m.body)
        return
      case "status":
        res.writeHead(m.status, { "content-type": "text/plain" }).end("error")
        return
      case "hang":
        return
    }
  }

  const serveCompletion = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    let body: { stream?: boolean } = {}
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      res.writeHead(400).end("bad json")
      return
    }
    const requestId = String(req.headers["x-request-id"] ?? "")
    const rankHeader = Number(req.headers["x-data-parallel-rank"] ?? 0)
    const dpRank = Number.isInteger(rankHeader) && rankHeader >= 0 && rankHeader < dpSize() ? rankHeader : 0
    received.push({ requestId, path, dpRank })
    const mode = opts.completions ?? "ok"
    if (mode === "hang") return
    if (mode === "500") {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal" }))
      return
    }
    const t = estimateTokens(body)
    const gen = generation
    running[dpRank] = (running[dpRank] ?? 0) + 1
    tokens[dpRank] = (tokens[dpRank] ?? 0) + t
    let counted = true
    const release = () => {
      if (!counted || gen !== generation) return
      counted = false
      running[dpRank] = (running[dpRank] ?? 1) - 1
      tokens[dpRank] = (tokens[dpRank] ?? t) - t
    }
    res.on("close", release)
    await sleep(opts.latencyMs ?? 0)
    const n = opts.chunks ?? 3
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      for (let i = 0; i < n && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ id: requestId, choices: [{ index: 0, text: `tok${i} ` }] })}\n\n`)
        if (opts.chunkDelayMs) await sleep(opts.chunkDelayMs)
      }
      res.end("data: [DONE]\n\n")
    } else {
      const text = Array.from({ length: n }, (_, i) => `tok${i}`).join(" ")
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: requestId,
          object: "text_completion",
          dp_rank: dpRank,
          choices: [{ index: 0, text }]
        })
      )
    }
    release()
  }

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    if (req.method === "GET" && (opts.loadPaths ?? ["/v1/loads", "/metrics"]).includes(path))
      return serveLoads(res)
    if (req.method === "POST" && (path === "/v1/completions" || path === "/v1/chat/completions")) {
      serveCompletion(req, res, path).catch(() => res.destroy())
      return
    }
    res.writeHead(404).end("not found")
  }

  let server: Server
  let port = initial.port ?? 0
  const listen = async () => {
    server = createServer(handler)
    server.on("connection", (s) => {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
    })
    server.listen(port, "127.0.0.1")
    await once(server, "listening")
    const addr = server.address()
    if (addr !== null && typeof addr === "object") port = addr.port
  }
  let listening = false
  const stop = async () => {
    if (!listening) return
    listening = false
    const closed = once(server, "close")
    server.close()
    for (const s of sockets) s.destroy()
    await closed
  }
  await listen()
  listening = true
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received: () => received,
    running: () => running,
    set: (o) => {
      opts = { ...opts, ...o }
    },
    restart: async () => {
      await stop()
      reset()
      await listen()
      listening = true
    },
    stop,
    close: stop
  }
}
