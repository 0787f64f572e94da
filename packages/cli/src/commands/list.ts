/**
 * `loadledger list policies|models|gpus|slo [--json]`: what the registries hold, read at call
 * time (a new policy or preset shows up without editing the CLI).
 *
 * @since 0.6.0
 */
import type { Command } from "commander"
import { fail } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { didYouMean } from "../internal/names.js"

/** What `list` can list. */
const KINDS = ["policies", "models", "gpus", "slo"] as const
type Kind = (typeof KINDS)[number]

/**
 * Where a policy comes from: the router project of its prefix (`smg`, `llm-d`, `aibrix`, ...), the
 * engine for SGLang's and vLLM's own, `loadledger` for the project's own policies.
 *
 * @example
 * ```ts
 * import { policySource } from "./list.js"
 * policySource({ name: "smg/prefix-hash", engine: "sglang", reference: true }) // => "smg"
 * policySource({ name: "total-tokens", engine: "sglang", reference: true }) // => "sglang"
 * policySource({ name: "ledger-balanced", engine: "any", reference: false }) // => "loadledger"
 * ```
 *
 * @category list
 * @since 0.6.0
 */
export const policySource = (e: {
  readonly name: string
  readonly engine: string
  readonly reference: boolean
}): string => {
  const slash = e.name.indexOf("/")
  if (slash > 0) return e.name.slice(0, slash)
  return e.reference ? e.engine : "loadledger"
}

/**
 * The rows `list KIND` prints, as plain objects (the `--json` output is `JSON.stringify` of them).
 *
 * @example
 * ```ts
 * import { listRows } from "./list.js"
 * const policies = await listRows("policies")
 * policies[0] // => { name: "round-robin", source: "sglang", engine: "sglang", reference: true, description: policies[0]!.description }
 * const gpus = await listRows("gpus")
 * gpus.map((g) => g.name).includes("h200") // => true
 * const models = await listRows("models")
 * models.find((m) => m.name === "llama2-70b")?.fitsOn // => ["b200"]
 * ```
 *
 * @category list
 * @since 0.6.0
 */
export const listRows = async (kind: Kind): Promise<ReadonlyArray<Record<string, unknown>>> => {
  if (kind === "policies") {
    const { policyEntries } = await import("@loadledger/policies")
    return policyEntries().map((e) => ({
      name: e.name,
      source: policySource(e),
      engine: e.engine,
      reference: e.reference,
      description: e.description.replace(/\s+/g, " ").trim()
    }))
  }
  if (kind === "slo") {
    const { SLO_PRESETS, describeSlo } = await import("@loadledger/sim")
    return Object.entries(SLO_PRESETS).map(([name, s]) => ({
      name,
      ttftSeconds: s.ttftSeconds,
      tpotSeconds: s.tpotSeconds,
      attainment: s.attainment,
      criterion: s.criterion,
      description: describeSlo(s),
      source: s.source
    }))
  }
  const { gpus, models } = await import("@loadledger/step-time/core")
  if (kind === "gpus")
    return Object.entries(gpus).map(([name, g]) => ({
      name,
      hbmGigabytes: g.hbmBytes / 1e9,
      hbmTerabytesPerSecond: g.hbmBandwidthBytesPerSecond / 1e12,
      bf16Teraflops: g.peakFlopsPerSecond / 1e12
    }))
  const { gpusFitting } = await import("../internal/simSetup.js")
  return Object.entries(models).map(([name, m]) => ({ name, tp: m.tp, fitsOn: gpusFitting(name) }))
}

const firstSentence = (s: string): string => {
  const cut = s.search(/[.;](\s|$)/)
  return cut < 0 ? s : s.slice(0, cut)
}

/** The terminal lines of `list KIND`: one aligned line per entry. */
const listText = (kind: Kind, rows: ReadonlyArray<Record<string, unknown>>): string => {
  const width = Math.max(...rows.map((r) => String(r.name).length))
  const name = (r: Record<string, unknown>) => String(r.name).padEnd(width)
  const line = (r: Record<string, unknown>): string => {
    if (kind === "policies")
      return `${name(r)}  ${String(r.source).padEnd(16)} ${String(r.engine).padEnd(6)}  ${firstSentence(String(r.description))}`
    if (kind === "models")
      return `${name(r)}  TP ${String(r.tp).padEnd(2)}  fits on ${(r.fitsOn as Array<string>).join(", ") || "no GPU preset"}`
    if (kind === "gpus")
      return `${name(r)}  ${String(r.hbmGigabytes).padStart(4)} GB  ${String(r.hbmTerabytesPerSecond).padStart(5)} TB/s  ${String(r.bf16Teraflops).padStart(6)} BF16 TFLOPS`
    return `${name(r)}  ${String(r.description)}`
  }
  const head =
    kind === "policies"
      ? `${"policy".padEnd(width)}  ${"source".padEnd(16)} engine  description (first sentence)`
      : kind === "models"
        ? `${"model".padEnd(width)}  preset tensor parallel, GPU presets it leaves a KV pool on`
        : kind === "gpus"
          ? `${"gpu".padEnd(width)}  HBM, bandwidth, dense BF16 peak`
          : `${"preset".padEnd(width)}  bounds (--slo NAME, overrides as NAME,attain=0.95)`
  return [head, ...rows.map(line)].join("\n")
}

/**
 * Registers `loadledger list <policies|models|gpus|slo> [--json]`.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./list.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "list"
 * ```
 *
 * @since 0.6.0
 */
export const register = (program: Command): void => {
  program
    .command("list")
    .description("list the registered policies, model presets, GPU presets or SLO presets")
    .argument("<what>", `one of ${KINDS.join(", ")}`)
    .option("--json", "print a JSON array, one object per entry")
    .addHelpText("after", examplesHelp("list"))
    .action(async (what: string, opts: { json?: boolean }) => {
      if (!(KINDS as ReadonlyArray<string>).includes(what)) {
        const guess = didYouMean(what, KINDS)
        return fail(
          `list: unknown list "${what}"${guess === undefined ? "" : ` (did you mean "${guess}"?)`}; one of ${KINDS.join(", ")}`
        )
      }
      const rows = await listRows(what as Kind)
      process.stdout.write(
        opts.json === true ? `${JSON.stringify(rows)}\n` : `${listText(what as Kind, rows)}\n`
      )
    })
}
