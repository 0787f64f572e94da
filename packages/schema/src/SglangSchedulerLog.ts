/**
 * SGLang's scheduler log lines: the `Decode batch` and `Prefill batch` lines every scheduler prints
 * (`python/sglang/srt/managers/scheduler_metrics_mixin.py`, `log_decode_stats` /
 * `log_prefill_stats`, sgl-project/sglang commit 01bb3c807f7e62c19a31de7548837505488c2b64; the
 * oldest form still in use, `Decode batch. #running-req: 1, #token: 234, token usage: 0.00, gen
 * throughput (token/s): 147.64, #queue-req: 0`, is the v0.4 `scheduler.py` one), behind the
 * logger's prefix `[<time> DP3 TP3 PP0 EP3] ` (each rank part present only when that parallelism
 * is on; `DP` only with DP attention).
 *
 * @since 0.5.0
 */
import * as Result from "effect/Result"
import { type DecodeError, decodeError } from "./DecodeError.js"
import { batchLineAt, parseBatchLine } from "./internal/schedulerLine.js"

/**
 * One scheduler batch line: which batch, the ranks of the logger prefix, and every `key: value`
 * item by its wire name (`#running-req`, `token usage`, `cuda graph`, ...; numbers as numbers,
 * `True` / `False` as booleans, anything else, e.g. a `[2, 2]` per-DP list, as its text).
 *
 * **When to use**: reading the lines themselves; {@link decodeSglangSchedulerLog} gives them, and
 * `decodeLedger` turns them into rows.
 *
 * @category SglangSchedulerLog
 * @since 0.5.0
 */
export interface SglangBatchLine {
  /** 1-based line number in the text. */
  readonly line: number
  readonly batch: "decode" | "prefill"
  /** `DPn` of the prefix; absent when the prefix has none (no DP attention). */
  readonly dpRank?: number | undefined
  readonly tpRank?: number | undefined
  readonly ppRank?: number | undefined
  readonly epRank?: number | undefined
  /** The prefix's other text (the logger's time), as printed. */
  readonly time?: string | undefined
  /** The forward iteration of `Decode batch [124],` (`SGLANG_LOG_FORWARD_ITERS`). */
  readonly forwardIter?: number | undefined
  readonly items: ReadonlyArray<readonly [string, number | boolean | string]>
}

/**
 * What {@link decodeSglangSchedulerLog} returns: the batch lines in order, and how many other
 * lines (any other log output) were passed over, with the first of them.
 *
 * @category SglangSchedulerLog
 * @since 0.5.0
 */
export interface SglangSchedulerLog {
  readonly lines: ReadonlyArray<SglangBatchLine>
  readonly otherLines: number
  readonly firstOtherLine?: number | undefined
}

/**
 * Read SGLang scheduler log text: every `Decode batch` / `Prefill batch` line, whatever the
 * prefix (`[2026-05-27 20:14:38 DP3 TP3 EP3] `, `[DP3] `, none, or text before the bracket such as
 * a container name), the separator (`.` before 2025, `,` after), the items' order, or items this
 * version does not know. Lines may end in CRLF. Other lines are counted, not read.
 *
 * Errors (`SyntaxError` naming the line and "SGLang scheduler log"): no batch line at all; an
 * item without `key: value` shape; a known count that is not a number (`#token: x`).
 *
 * **When to use**: a pasted or tailed SGLang server log; `decodeLedger` detects it (kind `auto`)
 * or reads it as kind `sglang-log`.
 *
 * @example
 * ```ts
 * import { decodeSglangSchedulerLog } from "@loadledger/schema"
 * const r = decodeSglangSchedulerLog("[2026-05-27 20:14:38 DP3 TP3] Decode batch, #running-req: 18, #token: 16384, token usage: 0.71, cuda graph: True, gen throughput (token/s): 2520.18, #queue-req: 3, \n")
 * r._tag === "Success" && r.success.lines[0]!.dpRank // => 3
 * r._tag === "Success" && r.success.lines[0]!.items.length // => 6
 * ```
 *
 * @category SglangSchedulerLog
 * @since 0.5.0
 */
export const decodeSglangSchedulerLog = (text: string): Result.Result<SglangSchedulerLog, DecodeError> => {
  const lines: Array<SglangBatchLine> = []
  let otherLines = 0
  let firstOtherLine: number | undefined
  const all = text.split("\n")
  for (let i = 0; i < all.length; i++) {
    const raw = all[i]!.endsWith("\r") ? all[i]!.slice(0, -1) : all[i]!
    const at = batchLineAt(raw)
    if (at === undefined) {
      if (raw.trim() !== "") {
        otherLines++
        firstOtherLine ??= i + 1
      }
      continue
    }
    const r = parseBatchLine(raw, at, i + 1)
    if (typeof r === "string")
      return Result.fail(
        decodeError("SyntaxError", `SGLang scheduler log, line ${i + 1}: ${r}`, { line: i + 1 })
      )
    lines.push(r)
  }
  if (lines.length === 0)
    return Result.fail(
      decodeError(
        "SyntaxError",
        "not an SGLang scheduler log: no 'Decode batch' or 'Prefill batch' line in the text",
        { line: 1 }
      )
    )
  return Result.succeed({ lines, otherLines, ...(firstOtherLine === undefined ? {} : { firstOtherLine }) })
}
