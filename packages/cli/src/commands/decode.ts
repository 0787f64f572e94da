/**
 * `loadledger decode`: decodes an SGLang / vLLM load report into the per-rank `RankLoad` rows (one JSON object per rank), its notices on stderr.
 *
 * @since 0.1.0
 */
import {
  decodeLedgerReport,
  escapeControl,
  formatDecodeError,
  formatLedgerNotice,
  type LedgerKind,
  ledgerKinds,
  stringifyJsonSafe
} from "@loadledger/schema"
import { type Command, Option } from "commander"
import { examplesHelp } from "../internal/examples.js"
import { readInput } from "../internal/readInput.js"

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
  rows.length === 0 ? "[]\n" : `[\n${rows.map((r) => `  ${stringifyJsonSafe(r)}`).join(",\n")}\n]\n`

/**
 * Registers `loadledger decode [FILE|-] [--kind ...] [--json]`: decodes a load payload (SGLang
 * `/v1/loads`, `/get_load`, `LoadStat` msgpack, vLLM / SGLang Prometheus text, vLLM logger lines)
 * and prints the per-rank ledger (`RankLoad` rows) as JSON on stdout, and every notice of
 * `decodeLedgerReport` (declared without samples, unknown series or fields, ambiguous series,
 * defaulted identity, unknown ranks) on stderr, one `notice: ...` line each. `--json` prints
 * `{"rows": [...], "notices": [...]}` on stdout instead (notices still on stderr), with
 * `"rankless"` when the payload had loads without a rank (a gateway's worker without details). On bad input
 * prints one line naming the field or line at fault on stderr and exits 1. Reads stdin when FILE
 * is `-` or absent.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./decode.js"
 * const program = new Command()
 * register(program)
 * const decode = program.commands[0]!
 * decode.name() // => "decode"
 * decode.options.map((o) => o.long) // => ["--kind", "--json"]
 * ```
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("decode")
    .description("decode an SGLang / vLLM load report to the per-rank ledger (JSON, one object per rank)")
    .argument("[file]", "payload file, or - for stdin", "-")
    .addOption(new Option("--kind <kind>", "payload format").choices(ledgerKinds).default("auto"))
    .option("--json", 'print {"rows": [...], "notices": [...]} (notices are also printed on stderr)')
    .addHelpText("after", examplesHelp("decode"))
    .action((file: string, opts: { kind: LedgerKind; json?: boolean }) => {
      const bytes = readInput(file)
      const binary = binaryPrefix(bytes)
      if (binary !== undefined && opts.kind !== "load-stat" && !isMsgpackArray(bytes)) {
        process.stderr.write(
          `loadledger decode: ${file === "-" ? "<stdin>" : escapeControl(file)}: not a load report: ${binary} in the first ${PREFIX_BYTES / 1024} KB, and not a msgpack LoadStat array (first byte 0x${(bytes[0] ?? 0).toString(16).padStart(2, "0")}); payloads are JSON, Prometheus text or msgpack\n`
        )
        process.exitCode = 1
        return
      }
      const isText = opts.kind !== "load-stat" && isProbablyText(bytes)
      const input = isText ? bytes.toString("utf8") : new Uint8Array(bytes)
      const r = decodeLedgerReport(input, opts.kind)
      if (r._tag === "Failure") {
        process.stderr.write(
          `loadledger decode: ${file === "-" ? "<stdin>" : escapeControl(file)}: ${formatDecodeError(r.failure)}\n`
        )
        process.exitCode = 1
        return
      }
      for (const n of r.success.notices) process.stderr.write(`${formatLedgerNotice(n)}\n`)
      const rankless = r.success.rankless ?? []
      if (rankless.length > 0 && opts.json !== true)
        process.stderr.write(
          `notice: ${rankless.length} load(s) without a rank (${rankless
            .slice(0, 4)
            .map((l) => escapeControl(l.worker ?? "engine"))
            .join(", ")}${rankless.length > 4 ? ", ..." : ""}): not rows; --json prints them as "rankless"\n`
        )
      process.stdout.write(
        opts.json === true
          ? `${stringifyJsonSafe({ rows: r.success.rows, notices: r.success.notices, ...(rankless.length > 0 ? { rankless } : {}) }, 2)}\n`
          : renderLedger(r.success.rows)
      )
    })
}

/** How much of the input is looked at to tell binary from text before any decoding. */
const PREFIX_BYTES = 64 * 1024

/**
 * Why the first {@link PREFIX_BYTES} of `b` are not text (a NUL byte, or invalid UTF-8, each with
 * its offset), else undefined. Looks at the prefix only, so 50 MB of random bytes fail at once.
 */
const binaryPrefix = (b: Buffer): string | undefined => {
  const head = b.subarray(0, PREFIX_BYTES)
  const nul = head.indexOf(0)
  if (nul >= 0) return `a NUL byte at offset ${nul}`
  // a character cut at the prefix's end is not an error: `stream` leaves it pending
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: head.length < b.length })
  } catch {
    return "invalid UTF-8"
  }
  return undefined
}

/** msgpack arrays (a LoadStat message) start with 0x90-0x9f, 0xdc or 0xdd; JSON and text never do. */
const isMsgpackArray = (b: Buffer): boolean => {
  const first = b[0] ?? 0
  return (first >= 0x90 && first <= 0x9f) || first === 0xdc || first === 0xdd
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
