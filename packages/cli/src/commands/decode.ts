import { decodeLedger, formatDecodeError, type LedgerKind } from "@loadledger/schema"
import { type Command, Option } from "commander"
import { readInput } from "../internal/readInput.js"

const kinds: ReadonlyArray<LedgerKind> = [
  "auto",
  "v1-loads",
  "get-load",
  "load-stat",
  "vllm-metrics",
  "sglang-metrics"
]

/**
 * Render a ledger as JSON: an array with one object per rank on its own line, present fields only.
 *
 * @example
 * ```ts
 * import { renderLedger } from "./decode.js"
 * renderLedger([{ dpRank: 0, numTotalTokens: 100 }]) // => '[\n  {"dpRank":0,"numTotalTokens":100}\n]\n'
 * ```
 *
 * @since 0.1.0
 */
export const renderLedger = (rows: ReadonlyArray<object>): string =>
  rows.length === 0 ? "[]\n" : `[\n${rows.map((r) => `  ${JSON.stringify(r)}`).join(",\n")}\n]\n`

/**
 * Registers `loadledger decode [FILE|-] [--kind ...]`: decodes a load payload (SGLang `/v1/loads`,
 * `/get_load`, `LoadStat` msgpack, vLLM / SGLang Prometheus text, vLLM logger lines) and prints
 * the normalized per-rank ledger as JSON on stdout. On bad input prints one line naming the field
 * or line at fault on stderr and exits 1. Reads stdin when FILE is `-` or absent.
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("decode")
    .description("decode an SGLang / vLLM load report to the per-rank ledger (JSON, one object per rank)")
    .argument("[file]", "payload file, or - for stdin", "-")
    .addOption(new Option("--kind <kind>", "payload format").choices(kinds as Array<string>).default("auto"))
    .action((file: string, opts: { kind: LedgerKind }) => {
      const bytes = readInput(file)
      const isText = opts.kind !== "load-stat" && isProbablyText(bytes)
      const input = isText ? bytes.toString("utf8") : new Uint8Array(bytes)
      const r = decodeLedger(input, opts.kind)
      if (r._tag === "Failure") {
        process.stderr.write(
          `loadledger decode: ${file === "-" ? "<stdin>" : file}: ${formatDecodeError(r.failure)}\n`
        )
        process.exitCode = 1
        return
      }
      process.stdout.write(renderLedger(r.success))
    })
}

/** Valid UTF-8 without NUL bytes is text; anything else is handed over as bytes (msgpack). */
const isProbablyText = (b: Buffer): boolean => {
  if (b.includes(0)) return false
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(b)
    return true
  } catch {
    return false
  }
}
