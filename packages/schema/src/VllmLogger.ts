/**
 * vLLM V1's periodic logger lines (`vllm/v1/metrics/loggers.py`, `LoggingStatLogger.log`), e.g.
 * `Engine 000: Avg prompt throughput: 16.5 tokens/s, Avg generation throughput: 1157.2 tokens/s,
 * Running: 51 reqs, Waiting: 117 reqs, GPU KV cache usage: 100.0%, Prefix cache hit rate: 70.0%`,
 * and V0's (`vllm/engine/metrics.py`, `LoggingStatLogger.log`): `Avg prompt throughput: 0.0 tokens/s,
 * Avg generation throughput: 10.2 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs,
 * GPU KV cache usage: 0.3%, CPU KV cache usage: 0.0%.` (V0's `Pending` is the waiting queue).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type DecodeError, decodeError } from "./DecodeError.js"

const Opt = Schema.optionalKey(Schema.Finite)

/**
 * One engine's numbers from a logger line. Percentages become 0..1 fractions (`100.0%` -> 1,
 * `98.6%` -> 0.986, shifted in decimal so no rounding is added); absent items stay absent.
 *
 * **When to use**: reading per-engine numbers from vLLM logs (issue reports, S07).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { VllmLoggerRecord } from "@loadledger/schema"
 * Schema.is(VllmLoggerRecord)({ engine: 1, line: 2, numWaitingReqs: 108, kvCacheUsage: 0.986 }) // => true
 * ```
 *
 * @category VllmLogger
 * @since 0.1.0
 */
export const VllmLoggerRecord = Schema.Struct({
  engine: Schema.Int,
  line: Schema.Int,
  avgPromptThroughputTokensPerSecond: Opt,
  avgGenerationThroughputTokensPerSecond: Opt,
  numRunningReqs: Opt,
  numWaitingReqs: Opt,
  kvCacheUsage: Opt,
  prefixCacheHitRate: Opt,
  mmCacheHitRate: Opt,
  numSwappedReqs: Opt,
  cpuKvCacheUsage: Opt
})
/** @category VllmLogger @since 0.1.0 */
export type VllmLoggerRecord = typeof VllmLoggerRecord.Type

const items: ReadonlyArray<readonly [RegExp, keyof VllmLoggerRecord, "num" | "pct"]> = [
  [/^Avg prompt throughput: ([\d.]+) tokens\/s$/, "avgPromptThroughputTokensPerSecond", "num"],
  [/^Avg generation throughput: ([\d.]+) tokens\/s$/, "avgGenerationThroughputTokensPerSecond", "num"],
  [/^Running: (\d+) reqs$/, "numRunningReqs", "num"],
  [/^Waiting: (\d+) reqs$/, "numWaitingReqs", "num"],
  [/^Pending: (\d+) reqs$/, "numWaitingReqs", "num"],
  [/^Swapped: (\d+) reqs$/, "numSwappedReqs", "num"],
  [/^CPU KV cache usage: ([\d.]+)%$/, "cpuKvCacheUsage", "pct"],
  [/^(?:GPU )?KV cache usage: ([\d.]+)%$/, "kvCacheUsage", "pct"],
  [/^Prefix cache hit rate: ([\d.]+)%$/, "prefixCacheHitRate", "pct"],
  [/^MM cache hit rate: ([\d.]+)%$/, "mmCacheHitRate", "pct"]
]

const known = [
  "Avg prompt throughput",
  "Avg generation throughput",
  "Running",
  "Waiting",
  "Pending",
  "Swapped",
  "KV cache usage",
  "Prefix cache hit rate",
  "MM cache hit rate"
]

/**
 * A percentage as written in vLLM's logger line to a 0..1 fraction, by moving the decimal point in
 * the string (exact decimal, no float division).
 *
 * **When to use**: reading a logger line's `KV cache usage: 98.6%`.
 *
 * @example
 * ```ts
 * import { percentToFraction } from "@loadledger/schema"
 * percentToFraction("98.6") // => 0.986
 * percentToFraction("0.3") // => 0.003
 * percentToFraction("100") // => 1
 * ```
 *
 * @category VllmLogger
 * @since 0.1.0
 */
export const percentToFraction = (s: string): number => {
  const [int = "0", frac = ""] = s.split(".")
  const padded = int.padStart(3, "0")
  return Number(`${padded.slice(0, -2)}.${padded.slice(-2)}${frac}`)
}

/**
 * Decode every logger line in a log excerpt, one record per line, in file order. Lines without
 * `Avg prompt throughput:` are skipped (logs hold other lines); a logger line with an item that
 * does not parse is a `SyntaxError` naming its line; no logger line at all is an error. A line
 * without an `Engine NNN:` prefix (DP = 1, or V0) is engine 0. V0 lines read `Pending` as
 * `numWaitingReqs`, `Swapped` as `numSwappedReqs`, `CPU KV cache usage` as `cpuKvCacheUsage`.
 * Numbers above 2^53 are errors. See {@link latestPerEngine}.
 *
 * @example
 * ```ts
 * import { decodeVllmLoggerLines } from "@loadledger/schema"
 * const r = decodeVllmLoggerLines("Engine 001: Avg prompt throughput: 0.0 tokens/s, Running: 31 reqs, Waiting: 108 reqs, GPU KV cache usage: 98.6%")
 * r._tag === "Success" && r.success[0]?.kvCacheUsage // => 0.986
 * const v0 = decodeVllmLoggerLines("INFO metrics.py:345] Avg prompt throughput: 0.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 4 reqs, GPU KV cache usage: 0.3%, CPU KV cache usage: 0.0%.")
 * v0._tag === "Success" && [v0.success[0]?.numWaitingReqs, v0.success[0]?.cpuKvCacheUsage] // => [4, 0]
 * ```
 *
 * **When to use**: log excerpts; `decodeLedger` keeps the latest line per engine.
 *
 * @category VllmLogger
 * @since 0.1.0
 */
export const decodeVllmLoggerLines = (
  text: string
): Result.Result<ReadonlyArray<VllmLoggerRecord>, DecodeError> =>
  Result.map(readLoggerLines(text), (r) => r.records)

/**
 * Logger records and the items no field reads (label -> first line), for the ledger's notices.
 *
 * **When to use**: like `decodeVllmLoggerLines`, when the items it skipped matter too.
 *
 * @example
 * ```ts
 * import { readLoggerLines } from "@loadledger/schema"
 * const r = readLoggerLines("Engine 000: Avg prompt throughput: 0.0 tokens/s, Running: 2 reqs, Spec decode: on")
 * r._tag === "Success" && r.success.records[0]?.numRunningReqs // => 2
 * r._tag === "Success" && [...r.success.skipped.keys()] // => ["Spec decode"]
 * ```
 *
 * @category VllmLogger
 * @since 0.1.0
 */
export const readLoggerLines = (
  text: string
): Result.Result<
  { readonly records: ReadonlyArray<VllmLoggerRecord>; readonly skipped: ReadonlyMap<string, number> },
  DecodeError
> => {
  const out: Array<VllmLoggerRecord> = []
  const skipped = new Map<string, number>()
  const lines = text.split(/\r?\n/)
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!
    const at = raw.indexOf("Avg prompt throughput:")
    if (at < 0) continue
    const line = n + 1
    const eng = /Engine (\d{1,9}): $/.exec(raw.slice(0, at))
    const rec: Record<string, number> = { engine: eng === null ? 0 : Number(eng[1]), line }
    // V0 ends its line with a period: `CPU KV cache usage: 0.0%.`
    for (const part of raw.slice(at).trim().replace(/\.$/, "").split(/,\s*/)) {
      const hit = items.find(([re]) => re.test(part))
      if (hit === undefined) {
        const label = /^([A-Za-z][A-Za-z ]*): /.exec(part)?.[1]
        // an item this version does not read is skipped; a known item that does not parse is an error
        if (label !== undefined && !known.some((k) => label.endsWith(k))) {
          if (!skipped.has(label)) skipped.set(label, line)
          continue
        }
        return Result.fail(decodeError("SyntaxError", `unreadable logger item '${part}'`, { line }))
      }
      const [re, key, kind] = hit
      const v = re.exec(part)![1]!
      if (!/^\d+(\.\d+)?$/.test(v))
        return Result.fail(decodeError("SyntaxError", `bad number '${v}' in '${part}'`, { line }))
      const x = kind === "pct" ? percentToFraction(v) : Number(v)
      if (
        !Number.isSafeInteger(Math.trunc(x)) ||
        (kind === "num" &&
          key !== "avgPromptThroughputTokensPerSecond" &&
          key !== "avgGenerationThroughputTokensPerSecond" &&
          !Number.isSafeInteger(x))
      )
        return Result.fail(
          decodeError("SyntaxError", `number '${v}' in '${part}' is not exact (above 2^53)`, { line })
        )
      rec[key] = x
    }
    out.push(rec as unknown as VllmLoggerRecord)
  }
  if (out.length === 0)
    return Result.fail(
      decodeError("SyntaxError", "no vLLM logger line ('Avg prompt throughput:') found", { line: 1 })
    )
  return Result.succeed({ records: out, skipped })
}

/**
 * The latest record of each engine (later lines are newer), ascending by engine.
 *
 * @example
 * ```ts
 * import { latestPerEngine } from "@loadledger/schema"
 * latestPerEngine([{ engine: 0, line: 1, numRunningReqs: 1 }, { engine: 0, line: 2, numRunningReqs: 2 }])[0]?.numRunningReqs // => 2
 * ```
 *
 * **When to use**: collapsing a log to the current state of each engine.
 *
 * @category VllmLogger
 * @since 0.1.0
 */
export const latestPerEngine = (
  records: ReadonlyArray<VllmLoggerRecord>
): ReadonlyArray<VllmLoggerRecord> => {
  const m = new Map<number, VllmLoggerRecord>()
  for (const r of records) m.set(r.engine, r)
  return [...m.values()].sort((a, b) => a.engine - b.engine)
}
