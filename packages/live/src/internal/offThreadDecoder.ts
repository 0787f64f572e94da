/**
 * Decode load payloads on a worker thread, one at a time, each within a time budget, so a slow or
 * hostile payload never blocks the router's event loop. A decode over budget terminates the worker
 * (a fresh one takes the next body) and fails as `DecodeBudgetExceeded`.
 *
 * Running from TypeScript sources (tests, tsx), the worker loads the `.ts` entry through tsx's ESM
 * API with the `@loadledger/source` condition; from the build, `dist/internal/decodeWorker.js`.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { decodeLedger, type LedgerKind, type RankLoad } from "@loadledger/schema"
import { Result } from "effect"

export interface DecodeFailure {
  readonly _tag: string
  readonly message: string
}

export interface OffThreadDecoder {
  readonly decode: (
    body: string | Uint8Array,
    kind: LedgerKind
  ) => Promise<Result.Result<ReadonlyArray<RankLoad>, DecodeFailure>>
  /** Decode times in ms measured inside the worker, since the last call (cleared on read). */
  readonly takeTimings: () => ReadonlyArray<number>
  /** False when the worker could not start and bodies are decoded on the calling thread. */
  readonly offThread: () => boolean
  readonly close: () => Promise<void>
}

const fromSource = import.meta.url.endsWith(".ts")

const spawn = (): Worker => {
  if (!fromSource) return new Worker(new URL("./internal/decodeWorker.js", import.meta.url))
  const require = createRequire(import.meta.url)
  const tsxApi = pathToFileURL(join(dirname(require.resolve("tsx/package.json")), "dist/esm/api/index.mjs")).href
  const entry = new URL("./decodeWorker.ts", import.meta.url).href
  const code = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(entry)})`
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {
    execArgv: ["--conditions=@loadledger/source"]
  })
}

interface Pending {
  readonly id: number
  readonly body: string | Uint8Array
  readonly kind: LedgerKind
  readonly resolve: (r: Result.Result<ReadonlyArray<RankLoad>, DecodeFailure>) => void
}

interface Reply {
  readonly id?: number
  readonly ready?: boolean
  readonly ok?: boolean
  readonly rows?: ReadonlyArray<RankLoad>
  readonly tag?: string
  readonly message?: string
  readonly ms?: number
}

export const makeOffThreadDecoder = (budgetMs: number): OffThreadDecoder => {
  let worker: Worker | undefined
  let ready = false
  let nextId = 1
  const queue: Array<Pending> = []
  let current: Pending | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  let timings: Array<number> = []
  // a worker that cannot start (an unusual loader or bundle): decode on this thread instead
  let broken = false
  const inThread = (body: string | Uint8Array, kind: LedgerKind) => {
    try {
      const r = decodeLedger(body, kind)
      return Result.isSuccess(r) ? Result.succeed(r.success) : Result.fail({ _tag: r.failure._tag, message: r.failure.message })
    } catch (e) {
      return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
    }
  }

  const settle = (r: Result.Result<ReadonlyArray<RankLoad>, DecodeFailure>) => {
    const job = current
    current = undefined
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    job?.resolve(r)
    pump()
  }
  const kill = (why: DecodeFailure) => {
    const w = worker
    worker = undefined
    ready = false
    if (w !== undefined) void w.terminate()
    if (current !== undefined) settle(Result.fail(why))
  }
  const start = () => {
    const w = spawn()
    worker = w
    w.unref()
    w.on("message", (m: Reply) => {
      if (w !== worker) return
      if (m.ready === true) {
        ready = true
        pump()
        return
      }
      if (current === undefined || m.id !== current.id) return
      if (m.ms !== undefined) timings.push(m.ms)
      settle(
        m.ok === true
          ? Result.succeed(m.rows ?? [])
          : Result.fail({ _tag: m.tag ?? "DecodeFailed", message: m.message ?? "decode failed" })
      )
    })
    w.on("error", (e) => {
      if (w !== worker) return
      if (!ready) {
        broken = true
        worker = undefined
        for (const j of queue.splice(0)) j.resolve(inThread(j.body, j.kind))
        return
      }
      kill({ _tag: "DecodeWorkerFailed", message: e.message })
    })
    w.on("exit", () => {
      if (w === worker) kill({ _tag: "DecodeWorkerFailed", message: "decode worker exited" })
    })
  }
  const pump = () => {
    if (closed || current !== undefined || queue.length === 0) return
    if (worker === undefined) start()
    if (!ready) return
    const job = queue.shift()!
    current = job
    timer = setTimeout(
      () => kill({ _tag: "DecodeBudgetExceeded", message: `decode took longer than ${budgetMs} ms` }),
      budgetMs
    )
    worker!.postMessage({ id: job.id, body: job.body, kind: job.kind })
  }
  return {
    decode: (body, kind) =>
      new Promise((resolve) => {
        if (closed) return resolve(Result.fail({ _tag: "DecoderClosed", message: "the router is closed" }))
        if (broken) return resolve(inThread(body, kind))
        queue.push({ id: nextId++, body, kind, resolve })
        pump()
      }),
    offThread: () => !broken,
    takeTimings: () => {
      const t = timings
      timings = []
      return t
    },
    close: async () => {
      closed = true
      for (const j of queue.splice(0)) j.resolve(Result.fail({ _tag: "DecoderClosed", message: "the router is closed" }))
      const w = worker
      worker = undefined
      if (current !== undefined) settle(Result.fail({ _tag: "DecoderClosed", message: "the router is closed" }))
      if (w !== undefined) await w.terminate()
    }
  }
}
