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
import { decodeLedgerReport, formatDecodeError, type LedgerKind, type LedgerReport } from "@loadledger/schema"
import * as Result from "effect/Result"

export interface DecodeFailure {
  readonly _tag: string
  readonly message: string
}

export interface OffThreadDecoder {
  readonly decode: (
    body: string | Uint8Array,
    kind: LedgerKind
  ) => Promise<Result.Result<LedgerReport, DecodeFailure>>
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
  const tsxApi = pathToFileURL(
    join(dirname(require.resolve("tsx/package.json")), "dist/esm/api/index.mjs")
  ).href
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
  readonly resolve: (r: Result.Result<LedgerReport, DecodeFailure>) => void
  timer?: NodeJS.Timeout | undefined
}

interface Reply {
  readonly id?: number
  readonly ready?: boolean
  readonly ok?: boolean
  readonly report?: LedgerReport
  readonly tag?: string
  readonly message?: string
  readonly ms?: number
}

type Outcome = Result.Result<LedgerReport, DecodeFailure>

const inThread = (body: string | Uint8Array, kind: LedgerKind): Outcome => {
  try {
    const r = decodeLedgerReport(body, kind)
    return Result.isSuccess(r)
      ? Result.succeed(r.success)
      : Result.fail({ _tag: r.failure._tag, message: formatDecodeError(r.failure) })
  } catch (e) {
    return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
  }
}

/**
 * `budgetMs` bounds each body from the moment it is handed over (queueing, a worker (re)starting and
 * the decode itself): past it the body fails as `DecodeBudgetExceeded`. A worker still busy with
 * that body 3 x `budgetMs` later is terminated and a fresh one started.
 */
export const makeOffThreadDecoder = (budgetMs: number): OffThreadDecoder => {
  let worker: Worker | undefined
  let ready = false
  let nextId = 1
  const queue: Array<Pending> = []
  let current: Pending | undefined
  let closed = false
  let timings: Array<number> = []
  // a worker that cannot start (an unusual loader or bundle): decode on the calling thread instead
  let broken = false

  const resolveJob = (job: Pending, r: Outcome) => {
    if (job.timer !== undefined) clearTimeout(job.timer)
    job.resolve(r)
  }
  const finishCurrent = (r: Outcome) => {
    const job = current
    current = undefined
    if (job !== undefined) resolveJob(job, r)
    pump()
  }
  const stopWorker = () => {
    if (abandoned !== undefined) clearTimeout(abandoned.timer)
    abandoned = undefined
    const w = worker
    worker = undefined
    ready = false
    if (w !== undefined) void w.terminate()
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
      if (m.ms !== undefined) timings.push(m.ms)
      if (abandoned !== undefined && m.id === abandoned.id) {
        clearTimeout(abandoned.timer)
        abandoned = undefined
        pump()
        return
      }
      if (current === undefined || m.id !== current.id) return
      finishCurrent(
        m.ok === true
          ? Result.succeed(m.report ?? { rows: [], notices: [] })
          : Result.fail({ _tag: m.tag ?? "DecodeFailed", message: m.message ?? "decode failed" })
      )
    })
    w.on("error", (e) => {
      if (w !== worker) return
      if (!ready) {
        broken = true
        worker = undefined
        const jobs = current === undefined ? queue.splice(0) : [current, ...queue.splice(0)]
        current = undefined
        for (const j of jobs) resolveJob(j, inThread(j.body, j.kind))
        return
      }
      stopWorker()
      finishCurrent(Result.fail({ _tag: "DecodeWorkerFailed", message: e.message }))
    })
    w.on("exit", () => {
      if (w !== worker) return
      stopWorker()
      finishCurrent(Result.fail({ _tag: "DecodeWorkerFailed", message: "decode worker exited" }))
    })
  }
  // a job over budget fails at once; the worker is only terminated (and a fresh one started) when it
  // is still busy with it at 4 x budget: a slow decode costs CPU once, a runaway one is stopped
  let abandoned: { readonly id: number; readonly timer: NodeJS.Timeout } | undefined
  const overBudget = (job: Pending) => {
    const failure = Result.fail({ _tag: "DecodeBudgetExceeded", message: `no decode within ${budgetMs} ms` })
    if (job === current) {
      current = undefined
      resolveJob(job, failure)
      const w = worker
      abandoned = {
        id: job.id,
        timer: setTimeout(() => {
          if (worker !== w || abandoned?.id !== job.id) return
          abandoned = undefined
          stopWorker()
          if (!closed) start()
        }, 3 * budgetMs)
      }
      return
    }
    const i = queue.indexOf(job)
    if (i >= 0) queue.splice(i, 1)
    resolveJob(job, failure)
  }
  const pump = () => {
    if (closed || current !== undefined || abandoned !== undefined || queue.length === 0) return
    if (worker === undefined) start()
    if (!ready) return
    const job = queue.shift()!
    current = job
    worker!.postMessage({ id: job.id, body: job.body, kind: job.kind })
  }
  return {
    decode: (body, kind) =>
      new Promise((resolve) => {
        if (closed) return resolve(Result.fail({ _tag: "DecoderClosed", message: "the router is closed" }))
        if (broken) return resolve(inThread(body, kind))
        const job: Pending = { id: nextId++, body, kind, resolve }
        job.timer = setTimeout(() => overBudget(job), budgetMs)
        queue.push(job)
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
      const closedFailure = Result.fail({ _tag: "DecoderClosed", message: "the router is closed" })
      for (const j of queue.splice(0)) resolveJob(j, closedFailure)
      const w = worker
      worker = undefined
      if (current !== undefined) finishCurrent(closedFailure)
      if (w !== undefined) await w.terminate()
    }
  }
}
