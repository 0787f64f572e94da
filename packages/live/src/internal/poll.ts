/**
 * One poll of a source (bounded in time and bytes) and the in-thread decode of a small body: the
 * I/O half of `LiveRouter.ts`.
 *
 * @internal
 */
import { decodeLedgerReport, formatDecodeError, type LedgerKind, type LedgerReport } from "@loadledger/schema"
import * as Result from "effect/Result"
import type { PollFailure } from "../LastHeard.js"

export const failure = (kind: PollFailure["kind"], message: string): PollFailure => ({
  _tag: "PollFailure",
  kind,
  message
})

const errorCode = (e: unknown): string | undefined => {
  let c: unknown = e
  for (let i = 0; i < 4 && c !== undefined && c !== null; i++) {
    const code = (c as { code?: unknown }).code
    if (typeof code === "string") return code
    c = (c as { cause?: unknown }).cause
  }
  return undefined
}

export const decodeHere = (
  body: string | Uint8Array,
  kind: LedgerKind
): Result.Result<LedgerReport, { readonly _tag: string; readonly message: string }> => {
  try {
    const r = decodeLedgerReport(body, kind)
    // the failure's message names where (`$.loads[0].timestamp: Expected number`)
    return Result.isSuccess(r)
      ? r
      : Result.fail({ _tag: r.failure._tag, message: formatDecodeError(r.failure) })
  } catch (e) {
    return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
  }
}

/** One poll of `url`: the body (bounded by `maxBytes`), or why there is none; all within `timeoutMs`. */
export const pollOnce = async (
  url: string,
  src: { readonly timeoutMs: number },
  maxBytes: number
): Promise<Result.Result<Uint8Array, PollFailure>> => {
  const ac = new AbortController()
  const started = performance.now()
  // a timer that fires late means this process was stalled (CPU starved, GC): the answer may be
  // waiting unread, so a late timeout grants one short grace before blaming the worker
  let graced = false
  const expire = () => {
    const late = performance.now() - started - src.timeoutMs
    if (!graced && late > 20) {
      graced = true
      timer = setTimeout(expire, Math.min(100, src.timeoutMs))
      return
    }
    ac.abort()
  }
  let timer = setTimeout(expire, src.timeoutMs)
  try {
    const res = await fetch(url, { signal: ac.signal })
    if (res.status < 200 || res.status >= 300) {
      await res.body?.cancel().catch(() => {})
      return Result.fail(failure("http-status", `HTTP ${res.status} from ${url}`))
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    if (res.body !== null) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.length
        if (size > maxBytes) {
          ac.abort()
          return Result.fail(failure("decode", `load body above ${maxBytes} bytes from ${url}`))
        }
        chunks.push(chunk)
      }
    }
    return Result.succeed(Buffer.concat(chunks))
  } catch (e) {
    if (ac.signal.aborted)
      return Result.fail(failure("timeout", `no complete answer within ${src.timeoutMs} ms`))
    const code = errorCode(e)
    return Result.fail(failure("unreachable", `${code ?? "fetch failed"}: ${url}`))
  } finally {
    clearTimeout(timer)
  }
}
