/**
 * @loadledger/cli: the `loadledger` command.
 *
 * Commands are loaded on demand: the table below names each command, its one-line description
 * and a dynamic `import()` of its module, so `--version`, `--help` and an unknown command load
 * only commander (not effect or the simulator).
 *
 * @since 0.1.0
 */
import { Command, CommanderError } from "commander"
import { examplesHelp } from "./internal/examples.js"
import { didYouMean as guessName } from "./internal/names.js"
import { escapeLines } from "./internal/terminalText.js"
import { versionText } from "./internal/version.js"

/** One command of the table: its name, its root-help line, and how to load its `register`. */
interface CommandEntry {
  readonly name: string
  readonly description: string
  readonly load: () => Promise<{ readonly register: (program: Command) => void }>
}

// Adding a command is one line here.
const COMMANDS: ReadonlyArray<CommandEntry> = [
  {
    name: "decode",
    description: "decode an SGLang / vLLM load report to the per-rank ledger (JSON, one object per rank)",
    load: () => import("./commands/decode.js")
  },
  {
    name: "conformance",
    description: "replay upstream golden vectors (SGLang / vLLM reference files) against loadledger",
    load: () => import("./commands/conformance.js")
  },
  {
    name: "step-time",
    description: "model one lockstep DP step: per-rank attention, MoE, collectives and sync wait",
    load: () => import("./commands/stepTime.js")
  },
  {
    name: "calibrate",
    description: "fit step-time efficiencies/overheads to measured profiles and report held-out error",
    load: () => import("./commands/calibrate.js")
  },
  {
    name: "simulate",
    description: "replay a request trace through routing policies on a simulated lockstep DP group",
    load: () => import("./commands/simulate.js")
  },
  {
    name: "diagnose",
    description: "which kind of slow is each rank (hardware, load, ok) from a /v1/loads time series",
    load: () => import("./commands/diagnose.js")
  },
  {
    name: "capacity",
    description:
      "find the largest arrival rate a simulated DP group keeps up with on a trace, and the rates at shares of it",
    load: () => import("./commands/capacity.js")
  },
  {
    name: "goodput",
    description:
      "rank routing policies by goodput under a latency SLO, with confidence intervals, paired verdicts and a ceiling",
    load: () => import("./commands/goodput.js")
  },
  {
    name: "tune",
    description:
      "tune an own policy's term weights for the highest goodput on a trace under an SLO; print the configuration",
    load: () => import("./commands/tune.js")
  },
  {
    name: "serve",
    description: "run the live router: a load-aware reverse proxy for OpenAI-style completions",
    load: () => import("./commands/serve.js")
  },
  {
    name: "compare",
    description:
      "compare two or more policies on a trace by goodput under a latency SLO: every pair's paired verdict",
    load: () => import("./commands/compare.js")
  },
  {
    name: "sweep",
    description:
      "run a grid of simulations (traces x rates x DP sizes x front ends x policies) from a YAML/JSON spec",
    load: () => import("./commands/sweep.js")
  },
  {
    name: "list",
    description: "list the registered policies, model presets, GPU presets or SLO presets (--json)",
    load: () => import("./commands/list.js")
  },
  {
    name: "reproduce",
    description:
      "replay a published end-to-end result (--list names them) and print published beside modelled, as ratios",
    load: () => import("./commands/reproduce.js")
  },
  {
    name: "completion",
    description: "print a shell completion script (bash, zsh or fish) for every command and flag",
    load: () => import("./commands/completion.js")
  }
]

/**
 * Every command's name, in the root help's order (what completion and the help-examples test walk).
 *
 * @example
 * ```ts
 * import { commandNames } from "@loadledger/cli"
 * commandNames().includes("compare") // => true
 * ```
 *
 * @category cli
 * @since 0.6.0
 */
export const commandNames = (): ReadonlyArray<string> => COMMANDS.map((c) => c.name)

/**
 * A program with every command registered with all its options (each command module loaded): what
 * `loadledger completion` generates its scripts from.
 *
 * @example
 * ```ts
 * import { fullProgram } from "@loadledger/cli"
 * const p = await fullProgram()
 * p.commands.find((c) => c.name() === "simulate")!.options.some((o) => o.long === "--trace") // => true
 * ```
 *
 * @category cli
 * @since 0.6.0
 */
export const fullProgram = async (): Promise<Command> => {
  const p = root()
  for (const c of COMMANDS) (await c.load()).register(p)
  return p
}

/**
 * The closest of `candidates` to `name` when it is near enough to be a likely typo (edit distance
 * at most 2, or a third of the name), else undefined.
 *
 * @example
 * ```ts
 * import { didYouMean } from "@loadledger/cli"
 * didYouMean("simulte", ["simulate", "sweep"]) // => "simulate"
 * didYouMean("xyz", ["simulate", "sweep"]) // => undefined
 * ```
 *
 * @category cli
 * @since 0.4.0
 */
export const didYouMean = (name: string, candidates: ReadonlyArray<string>): string | undefined =>
  guessName(name, candidates)

const root = (): Command =>
  new Command("loadledger")
    .description("Model and check how LLM serving engines spread requests over data-parallel ranks.")
    .version(versionText(), "-V, --version", "print the versions of loadledger and its packages")
    .exitOverride()
    // commander's errors quote the flag values given (`argument '\x1b[2J' is invalid`): escaped
    .configureOutput({ outputError: (text, write) => write(escapeLines(text)) })

/** The root program: the table's commands by name and the root examples. */
const withExamples = (p: Command): Command => p.addHelpText("after", examplesHelp(""))

/**
 * Build the `loadledger` program (commander) with every subcommand named (each command's options
 * are loaded when it runs: see `main`).
 *
 * @example
 * ```ts
 * import { program } from "@loadledger/cli"
 * program().name() // => "loadledger"
 * program().commands.map((c) => c.name()) // => ["decode", "conformance", "step-time", "calibrate", "simulate", "diagnose", "capacity", "goodput", "tune", "serve", "compare", "sweep", "list", "reproduce", "completion"]
 * ```
 *
 * @category cli
 * @since 0.1.0
 */
export const program = (): Command => {
  const p = withExamples(root())
  for (const c of COMMANDS) p.command(c.name).description(c.description)
  return p
}

/** The first argument after the executable and script that is not an option, if any. */
const commandName = (args: ReadonlyArray<string>): string | undefined => args.find((a) => !a.startsWith("-"))

/**
 * Run the CLI on `argv` (as `process.argv`). Resolves to the exit code: 0 on success, 1 on bad
 * input or failed checks. Errors are printed as one line on stderr.
 *
 * @example
 * ```ts
 * import { main } from "@loadledger/cli"
 * // prints "loadledger: unknown model gpt-9 (presets: ...)" on stderr
 * await main(["node", "loadledger", "step-time", "--model", "gpt-9", "--gpu", "h200", "--ranks", "[[1]]"]) // => 1
 * ```
 *
 * @category cli
 * @since 0.1.0
 */
export const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  try {
    const name = commandName(argv.slice(2))
    const entry = name === undefined ? undefined : COMMANDS.find((c) => c.name === name)
    if (name !== undefined && entry === undefined && name !== "help") {
      const guess = didYouMean(
        name,
        COMMANDS.map((c) => c.name)
      )
      process.stderr.write(
        `loadledger: unknown command '${name}'${guess === undefined ? "" : ` (did you mean '${guess}'?)`}; see loadledger --help\n`
      )
      return 1
    }
    let p: Command
    if (entry === undefined) p = program()
    // completion is generated from every command's definition: all of them are registered
    else if (entry.name === "completion") p = await fullProgram()
    else {
      p = root()
      ;(await entry.load()).register(p)
    }
    await p.parseAsync([...argv])
    return process.exitCode === undefined ? 0 : Number(process.exitCode)
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1
    const message = e instanceof Error ? e.message : String(e)
    // loaded only on this error path, so start-up stays light
    const { escapeControl } = await import("@loadledger/schema")
    process.stderr.write(`loadledger: ${escapeControl(message.replace(/\s*\n\s*/g, " "))}\n`)
    return 1
  }
}
