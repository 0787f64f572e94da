/**
 * Checks of `simulate`'s arguments that run before any work starts (policy list, output paths),
 * and the help text listing what the registries hold.
 *
 * @since 0.2.0
 */
import { accessSync, constants, statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { findPolicy, type PolicyEntry, policyEntries } from "@loadledger/policies"
import { checkKvPool } from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time/core"
import { unknownName } from "../internal/names.js"
import { gpusFitting } from "../internal/simSetup.js"

/**
 * A bad argument: the option it came from (`--policies`, `--report`, ...) and a one-line message.
 *
 * @category simulate
 * @since 0.2.0
 */
export interface ArgError {
  readonly _tag: "ArgError"
  readonly option: string
  readonly message: string
}

const argError = (option: string, message: string): ArgError => ({ _tag: "ArgError", option, message })

/**
 * `true` when `x` is an {@link ArgError}.
 *
 * @example
 * ```ts
 * import { isArgError, parsePolicyList } from "./simulateArgs.js"
 * isArgError(parsePolicyList("round-robin")) // => false
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const isArgError = (x: unknown): x is ArgError =>
  typeof x === "object" && x !== null && (x as { _tag?: unknown })._tag === "ArgError"

/**
 * Split a comma-separated `--policies` value and resolve each name in the policies registry
 * (`all`: every registered policy; the commands' default is the demo's five reference policies).
 *
 * **When to use**: before reading the trace, so a typo or a repeated name costs no simulation.
 * Errors (an {@link ArgError} for `--policies`): an empty list, an unknown name (the message lists
 * the registered ones), a name given twice (`total-tokens,total-tokens` would run the same policy
 * twice and show two identical rows).
 *
 * @example
 * ```ts
 * import { isArgError, parsePolicyList } from "./simulateArgs.js"
 * const ok = parsePolicyList(" round-robin , total-tokens ")
 * !isArgError(ok) && ok.map((e) => e.name) // => ["round-robin", "total-tokens"]
 * const dup = parsePolicyList("total-tokens,total-tokens")
 * isArgError(dup) && dup.message // => "--policies names \"total-tokens\" twice; give each policy once"
 * const typo = parsePolicyList("totl-tokens")
 * isArgError(typo) && typo.message // => 'unknown policy "totl-tokens" (did you mean "total-tokens"?); loadledger list policies names all 68'
 * const all = parsePolicyList("all")
 * !isArgError(all) && all.length // => 68
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const parsePolicyList = (list: string): ReadonlyArray<PolicyEntry> | ArgError => {
  if (list.trim() === "all") return policyEntries()
  const names = list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  if (names.length === 0) return argError("--policies", "--policies needs at least one policy name")
  const entries: Array<PolicyEntry> = []
  const seen = new Set<string>()
  for (const n of names) {
    if (seen.has(n)) return argError("--policies", `--policies names "${n}" twice; give each policy once`)
    seen.add(n)
    const entry = findPolicy(n)
    if (entry === undefined)
      return argError(
        "--policies",
        unknownName(
          "policy",
          n,
          policyEntries().map((e) => e.name),
          "policies"
        )
      )
    entries.push(entry)
  }
  return entries
}

/**
 * Check that a file can be written at `path` before any work is done: its directory exists, is a
 * directory and is writable, and `path` itself is not a directory (nor an existing read-only file).
 * Returns `undefined` when it can, else an {@link ArgError} for `option`. Reads the file system;
 * writes nothing.
 *
 * @example
 * ```ts
 * import { checkOutputPath } from "./simulateArgs.js"
 * checkOutputPath("--report", "/no/such/dir/r.html")?.message // => "--report: directory /no/such/dir does not exist"
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const checkOutputPath = (option: string, path: string): ArgError | undefined => {
  if (path.trim() === "") return argError(option, `${option} needs a file path`)
  const full = resolve(path)
  const dir = dirname(full)
  const dirStat = statOrUndefined(dir)
  if (dirStat === undefined) return argError(option, `${option}: directory ${dir} does not exist`)
  if (!dirStat.isDirectory()) return argError(option, `${option}: ${dir} is not a directory`)
  const fileStat = statOrUndefined(full)
  if (fileStat?.isDirectory()) return argError(option, `${option}: ${path} is a directory, not a file`)
  try {
    accessSync(fileStat === undefined ? dir : full, constants.W_OK)
  } catch {
    return argError(
      option,
      fileStat === undefined
        ? `${option}: directory ${dir} is not writable`
        : `${option}: ${path} is not writable`
    )
  }
  return undefined
}

const statOrUndefined = (p: string) => {
  try {
    return statSync(p)
  } catch {
    return undefined
  }
}

/**
 * Check that a model preset leaves a KV pool on a GPU preset before any work starts: `undefined`
 * when it does (or when either name is unknown: `simConfigFor` names those), else an
 * {@link ArgError} for `--gpu` whose message says how much of the GPU the weights take, the
 * smallest tensor-parallel size that would leave room (`checkKvPool` of @loadledger/sim), and
 * what works from the command line: the GPU presets the model fits on at its preset TP (the
 * presets fix TP; `simulate` has no `--tp`), or `--kv-pool-tokens` to set the pool by hand.
 *
 * **When to use**: when the pool is derived from the presets (no `--kv-pool-tokens`).
 *
 * @example
 * ```ts
 * import { checkModelFit } from "./simulateArgs.js"
 * checkModelFit("bloom-176b", "a100-80gb") // => undefined
 * checkModelFit("llama2-70b", "a100-80gb")?.message.endsWith(
 *   "llama2-70b fits at its preset tensor parallel 1 on --gpu b200, gb200; or set the pool by hand with --kv-pool-tokens N"
 * ) // => true
 * ```
 *
 * @category simulate
 * @since 0.4.0
 */
export const checkModelFit = (model: string, gpu: string, tp?: number): ArgError | undefined => {
  const preset = models[model]
  const g = gpus[gpu]
  if (preset === undefined || g === undefined) return undefined
  const m = tp === undefined ? preset : { ...preset, tp }
  const noPool = checkKvPool(m, g)
  if (noPool === undefined) return undefined
  const fits = gpusFitting(model, tp)
  const at = tp === undefined ? `its preset tensor parallel ${m.tp}` : `tensor parallel ${tp}`
  const where =
    fits.length === 0
      ? `${model} fits on no GPU preset at ${at}`
      : `${model} fits at ${at} on --gpu ${fits.join(", ")}`
  return argError(
    "--gpu",
    `${noPool.message}${noPool.fitsAt === undefined ? "" : ` (--tp ${noPool.fitsAt.tp})`}. ${where}; or set the pool by hand with --kv-pool-tokens N`
  )
}

/**
 * The text `simulate --help` appends: the registered policy names (with their engine and one-line
 * description), model presets (each with its preset tensor-parallel size and the GPU presets it
 * leaves a KV pool on, `gpusFitting`) and GPU presets, read from the registries at call time so a
 * new policy or preset shows up without editing the CLI.
 *
 * @example
 * ```ts
 * import { simulateHelpText } from "./simulateArgs.js"
 * simulateHelpText().includes("  round-robin") // => true
 * simulateHelpText().includes("GPUs (--gpu):") // => true
 * simulateHelpText().includes("  llama2-70b     TP 1  b200, gb200\n") // => true
 * ```
 *
 * @category simulate
 * @since 0.2.0
 */
export const simulateHelpText = (): string => {
  const entries = policyEntries()
  const width = Math.max(0, ...entries.map((e) => e.name.length))
  // the whole first sentence, wrapped under its column (never cut: it is how a user tells them apart)
  const column = " ".repeat(2 + width + 2 + 9)
  const policies = entries.map((e) => {
    const description = wrap(firstSentence(e.description), 100, column).slice(column.length)
    return `  ${e.name.padEnd(width)}  ${`[${e.engine}]`.padEnd(8)} ${description}`
  })
  const list = (xs: ReadonlyArray<string>) => wrap(xs.join(", "), 76, "  ")
  return [
    "",
    "Policies (--policies, comma-separated, each once):",
    ...policies,
    "",
    "Models (--model), each at its preset tensor-parallel size (TP), and the GPUs it leaves a KV",
    "pool on (--kv-pool-tokens sets the pool by hand):",
    ...modelLines(),
    "",
    "GPUs (--gpu):",
    list(Object.keys(gpus)),
    ""
  ].join("\n")
}

/** One help line per model preset: its name, preset TP and the GPU presets it fits on. */
const modelLines = (): Array<string> => {
  const names = Object.keys(models)
  const width = Math.max(0, ...names.map((n) => n.length))
  return names.map((n) => {
    const fits = gpusFitting(n)
    return `  ${n.padEnd(width)}  TP ${String(models[n]!.tp).padEnd(2)} ${fits.length === 0 ? "(no GPU preset)" : fits.join(", ")}`
  })
}

const firstSentence = (s: string): string => {
  const one = s.replace(/\s+/g, " ").trim()
  const cut = one.search(/[.;](\s|$)/)
  return cut < 0 ? one : one.slice(0, cut)
}

const wrap = (text: string, width: number, indent: string): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "") lines.push(indent + line)
  return lines.join("\n")
}
