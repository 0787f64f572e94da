/**
 * A loopback fake of an SGLang or vLLM engine for router tests and soaks: OpenAI-style completions
 * (streamed or not) and a load endpoint, each with switchable faults. Binds 127.0.0.1 only.
 *
 * @since 0.2.0
 */
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { FakeEngine, FakeEngineOptions, Received } from "./FakeEngineTypes.js"

/**
 * The fake engine's types, defined in the leaf module `FakeEngineTypes.ts` and re-exported here,
 * where they have always been imported.
 *
 * @since 0.2.0
 */
export type {
  CompletionsFault,
  FakeEngine,
  FakeEngineOptions,
  LoadsFault,
  Received
} from "./FakeEngineTypes.js"

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// the nested part is built once per shape: an engine serves it on every poll
const windowsCache = new Map<string, string>()

/**
 * A valid `/v1/loads` body whose `decode_metrics_windows` are nested `depth` deep and padded to about
 * `bytes` characters: the oversized payload of the router fault matrix.
 *
 * @example
 * ```ts
 * import { nestedLoadsPayload } from "@loadledger/live/testing"
 * const body = nestedLoadsPayload(2, 10_000, 50)
 * body.length > 10_000 // => true
 * JSON.parse(body).loads.length // => 2
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const nestedLoadsPayload = (
  dpSize: number,
  bytes: number,
  depth: number,
  running: ReadonlyArray<number> = Array.from({ length: dpSize }, () => 0)
): string => {
  const now = Date.now() / 1000
  const per = Math.max(1, Math.ceil(bytes / Math.max(1, dpSize) / (depth * 2 + 10)))
  const key = `${per}/${depth}`
  let windows = windowsCache.get(key)
  if (windows === undefined) {
    const nest = (d: number): string => (d === 0 ? "[0.5,1.5]" : `[${nest(d - 1)}]`)
    windows = `[${Array.from({ length: per }, () => nest(depth)).join(",")}]`
    windowsCache.set(key, windows)
  }
  const loads = Array.from(
    { length: dpSize },
    (_, dpRank) =>
      `{"dp_rank":${dpRank},"timestamp":${now},"num_running_reqs":${running[dpRank]},"num_waiting_reqs":0,"num_used_tokens":0,"num_total_tokens":0,"token_usage":0,"decode_metrics_windows":${windows}}`
  )
  return `{"timestamp":"${new Date().toISOString()}","version":"fake-engine","loads":[${loads.join(",")}]}`
}

/**
 * Start a fake engine on 127.0.0.1.
 *
 * **When to use**: router tests and soaks on loopback (the live package's tests, `pnpm soak`).
 *
 * @example
 * ```ts
 * import { startFakeEngine } from "@loadledger/live/testing"
 * type V1Loads = { loads: Array<{ dp_rank: number; num_running_reqs: number }> }
 * const e = await startFakeEngine({ dpSize: 2 })
 * const loads = (await (await fetch(`${e.url}/v1/loads`)).json()) as V1Loads
 * loads.loads.map((l) => l.dp_rank) // => [0, 1]
 * e.set({ loads: { _tag: "negative" } })
 * const bad = (await (await fetch(`${e.url}/v1/loads`)).json()) as V1Loads
 * bad.loads[0]?.num_running_reqs // => -1
 * await e.close()
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const startFakeEngine = async (initial: FakeEngineOptions = {}): Promise<FakeEngine> => {
  let opts: FakeEngineOptions = {
    dpSize: 1,
    loads: { _tag: "live" },
    completions: "ok",
    chunks: 3,
    ...initial
  }
  const dpSize = () => opts.dpSize ?? 1
  const received: Array<Received> = []
  const running: Array<number> = Array.from({ length: dpSize() }, () => 0)
  const tokens: Array<number> = Array.from({ length: dpSize() }, () => 0)
  const sockets = new Set<Socket>()
  let frozen: string | undefined

  const liveLoads = (negative = false) => {
    const now = Date.now() / 1000
    return JSON.stringify({
      timestamp: new Date().toISOString(),
      version: "fake-engine",
      loads: running.map((r, dpRank) => ({
        dp_rank: dpRank,
        timestamp: now,
        num_running_reqs: negative ? -1 : r,
        num_waiting_reqs: 0,
        num_used_tokens: tokens[dpRank],
        num_total_tokens: tokens[dpRank],
        token_usage: 0
      }))
    })
  }

  const serveLoads = (res: ServerResponse) => {
    const m = opts.loads ?? { _tag: "live" }
    const send = (body: string | Buffer, type = "application/json") =>
      res.writeHead(200, { "content-type": type }).end(body)
    if (m._tag !== "frozen") frozen = undefined
    switch (m._tag) {
      case "live":
        return send(liveLoads())
      case "frozen":
        frozen ??= liveLoads()
        return send(frozen)
      case "negative":
        return send(liveLoads(true))
      case "drift":
        return send(JSON.stringify({ engines: running.map((r, rank) => ({ rank, running: r, waiting: 0 })) }))
      case "nested":
        return send(nestedLoadsPayload(dpSize(), m.bytes, m.depth, running))
      case "file":
        return send(readFileSync(m.path), m.contentType ?? "text/plain")
      case "body":
        return send(m.body, m.contentType ?? "text/plain")
      case "status":
        return void res.writeHead(m.status, { "content-type": "text/plain" }).end("error")
      case "hang":
        return
    }
  }

  const serveCompletion = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    let body: { stream?: boolean; prompt?: unknown } = {}
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      res.writeHead(400).end("bad json")
      return
    }
    const requestId = String(req.headers["x-request-id"] ?? "")
    const rankHeader = Number(req.headers["x-data-parallel-rank"] ?? "0")
    const dpRank = Number.isInteger(rankHeader) && rankHeader >= 0 && rankHeader < dpSize() ? rankHeader : 0
    received.push({ requestId, path, dpRank, atMs: Date.now() })
    const mode = opts.completions ?? "ok"
    if (mode === "hang") return
    if (mode === "500") {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "internal" }))
      return
    }
    const t = Math.max(1, Math.ceil((typeof body.prompt === "string" ? body.prompt.length : 4) / 4))
    running[dpRank]! += 1
    tokens[dpRank]! += t
    let counted = true
    const release = () => {
      if (!counted) return
      counted = false
      running[dpRank]! -= 1
      tokens[dpRank]! -= t
    }
    res.on("close", release)
    if (opts.latencyMs !== undefined) await sleep(opts.latencyMs)
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

  let server: Server | undefined
  let port = initial.port === undefined ? 0 : initial.port
  const start = async () => {
    if (server !== undefined) return
    const s = createServer(handler)
    s.on("connection", (c) => {
      sockets.add(c)
      c.on("close", () => sockets.delete(c))
    })
    s.listen(port, "127.0.0.1")
    await once(s, "listening")
    const addr = s.address()
    if (addr !== null && typeof addr === "object") port = addr.port
    server = s
  }
  const stop = async () => {
    const s = server
    if (s === undefined) return
    server = undefined
    const closed = once(s, "close")
    s.close()
    for (const c of sockets) c.destroy()
    await closed
  }
  await start()
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received: () => received,
    running: () => running,
    set: (o) => {
      opts = { ...opts, ...o }
    },
    stop,
    start,
    close: stop
  }
}
