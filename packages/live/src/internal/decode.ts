/**
 * The one place @loadledger/live touches @loadledger/schema's decoders.
 *
 * Contract used (issue 2): `decodeLedger(input, kind) => Result<ReadonlyArray<LedgerRow>, DecodeError>`
 * with absent fields omitted (never 0).
 */
import * as Schema from "@loadledger/schema"
import { Result } from "effect"

/** One rank's decoded row (the subset of the schema's `LedgerRow` the live router reads). */
export interface LedgerRow {
  readonly dpRank: number
  readonly timestamp?: number | undefined
  readonly numRunningReqs?: number | undefined
  readonly numWaitingReqs?: number | undefined
  readonly numTotalTokens?: number | undefined
  readonly kvCacheUsage?: number | undefined
}

/** A decoder failure: `_tag`, where (`path` or `line`), and a message. */
export interface DecodeError {
  readonly _tag: string
  readonly message: string
  readonly path?: unknown
  readonly line?: number | undefined
}

/** The wire formats a source can name. */
export type LedgerKind = "auto" | "v1-loads" | "get-load" | "load-stat" | "vllm-metrics" | "sglang-metrics"

/** The decoder signature the live router depends on. */
export type DecodeLedger = (
  input: string | Uint8Array,
  kind?: LedgerKind
) => Result.Result<ReadonlyArray<LedgerRow>, DecodeError>

const fromSchema = (Schema as unknown as Record<string, unknown>)["decodeLedger"] as DecodeLedger | undefined

/** Decode one fetched body to ledger rows with @loadledger/schema. */
export const decodeLedger: DecodeLedger = (input, kind = "auto") => {
  if (fromSchema === undefined) return interimDecode(input, kind)
  try {
    return fromSchema(input, kind)
  } catch (e) {
    return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
  }
}

// Interim decoder, used only while @loadledger/schema does not export `decodeLedger` yet:
// current-era `/v1/loads` JSON and vLLM `/metrics` gauges. Removed once the schema package lands.
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined)
const interimDecode: DecodeLedger = (input, kind = "auto") => {
  const text = typeof input === "string" ? input : new TextDecoder().decode(input)
  if (kind === "v1-loads" || (kind === "auto" && text.trimStart().startsWith("{"))) {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return Result.fail({ _tag: "DecodeError", path: [], message: `not JSON: ${String(e)}` })
    }
    const loads = (json as { loads?: unknown }).loads
    if (!Array.isArray(loads))
      return Result.fail({ _tag: "DecodeError", path: ["loads"], message: "missing" })
    const rows: Array<LedgerRow> = []
    for (const [i, l] of loads.entries()) {
      const r = l as Record<string, unknown>
      const dpRank = num(r["dp_rank"])
      if (dpRank === undefined)
        return Result.fail({ _tag: "DecodeError", path: ["loads", i, "dp_rank"], message: "not a number" })
      const row: Record<string, number> = { dpRank }
      for (const [wire, key] of [
        ["timestamp", "timestamp"],
        ["num_running_reqs", "numRunningReqs"],
        ["num_waiting_reqs", "numWaitingReqs"],
        ["num_total_tokens", "numTotalTokens"],
        ["token_usage", "kvCacheUsage"]
      ] as const) {
        const v = num(r[wire])
        if (v !== undefined) row[key] = v
      }
      rows.push(row as unknown as LedgerRow)
    }
    return Result.succeed(rows)
  }
  const byEngine = new Map<number, Record<string, number>>()
  for (const line of text.split("\n")) {
    const m =
      /^vllm:(num_requests_running|num_requests_waiting|kv_cache_usage_perc|gpu_cache_usage_perc)(\{[^}]*\})?\s+(\S+)/.exec(
        line
      )
    if (m === null) continue
    const engine = Number(/engine="(\d+)"/.exec(m[2] ?? "")?.[1] ?? 0)
    const row = byEngine.get(engine) ?? { dpRank: engine }
    const key =
      m[1] === "num_requests_running"
        ? "numRunningReqs"
        : m[1] === "num_requests_waiting"
          ? "numWaitingReqs"
          : "kvCacheUsage"
    row[key] = Number(m[3])
    byEngine.set(engine, row)
  }
  if (byEngine.size === 0)
    return Result.fail({ _tag: "DecodeError", line: 1, message: "no load gauges found" })
  return Result.succeed([...byEngine.values()] as unknown as ReadonlyArray<LedgerRow>)
}
