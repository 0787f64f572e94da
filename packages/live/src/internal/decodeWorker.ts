/**
 * Worker-thread entry of the off-thread decoder (see `offThreadDecoder.ts`): decodes one body per
 * message with @loadledger/schema's `decodeLedger` and posts the report (rows, notices, rank-less loads; or the failure) back.
 */
import { parentPort } from "node:worker_threads"
import { decodeLedgerReport, formatDecodeError, type LedgerKind } from "@loadledger/schema"
import * as Result from "effect/Result"

interface Job {
  readonly id: number
  readonly body: string | Uint8Array
  readonly kind: LedgerKind
}

const port = parentPort
if (port !== null) {
  port.on("message", (job: Job) => {
    const started = performance.now()
    try {
      const r = decodeLedgerReport(job.body, job.kind)
      const ms = performance.now() - started
      port.postMessage(
        Result.isSuccess(r)
          ? { id: job.id, ok: true, report: r.success, ms }
          : { id: job.id, ok: false, tag: r.failure._tag, message: formatDecodeError(r.failure), ms }
      )
    } catch (e) {
      port.postMessage({
        id: job.id,
        ok: false,
        tag: "DecoderThrew",
        message: e instanceof Error ? e.message : String(e),
        ms: performance.now() - started
      })
    }
  })
  port.postMessage({ ready: true })
}
