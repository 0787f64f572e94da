/**
 * @loadledger/cli: the `loadledger` command.
 *
 * @since 0.1.0
 */
import { escapeControl } from "@loadledger/schema"
import { Command, CommanderError } from "commander"
import * as calibrate from "./commands/calibrate.js"
import * as capacity from "./commands/capacity.js"
import * as conformance from "./commands/conformance.js"
import * as decode from "./commands/decode.js"
import * as simulate from "./commands/simulate.js"
import * as stepTime from "./commands/stepTime.js"
import * as sweep from "./commands/sweep.js"

/**
 * Build the `loadledger` program (commander) with every subcommand registered.
 *
 * @example
 * ```ts
 * import { program } from "@loadledger/cli"
 * program().name() // => "loadledger"
 * program().commands.map((c) => c.name()) // => ["decode", "conformance", "step-time", "calibrate", "simulate", "capacity", "sweep"]
 * ```
 *
 * @category cli
 * @since 0.1.0
 */
export const program = (): Command => {
  const p = new Command("loadledger")
    .description("Model and check how LLM serving engines spread requests over data-parallel ranks.")
    .version("0.1.0")
    .exitOverride()
  for (const c of [decode, conformance, stepTime, calibrate, simulate, capacity, sweep]) c.register(p)
  return p
}

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
    await program().parseAsync([...argv])
    return process.exitCode === undefined ? 0 : Number(process.exitCode)
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1
    const message = e instanceof Error ? e.message : String(e)
    process.stderr.write(`loadledger: ${escapeControl(message.replace(/\s*\n\s*/g, " "))}\n`)
    return 1
  }
}
