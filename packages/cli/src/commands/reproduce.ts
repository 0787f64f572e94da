/**
 * `loadledger reproduce NAME [--json]` and `loadledger reproduce --list`: replays a published
 * end-to-end result (see `src/reproduce/registry.ts`) through the model and prints published
 * beside modelled, with each ratio's error.
 *
 * @since 0.7.0
 */
import type { Command } from "commander"
import { fail } from "../internal/args.js"
import { examplesHelp } from "../internal/examples.js"
import { didYouMean } from "../internal/names.js"
import { listText, rowsJson, rowsText } from "../reproduce/format.js"
import { scenarios } from "../reproduce/registry.js"
import type { ReproduceScenario } from "../reproduce/Scenario.js"

interface Opts {
  readonly list?: boolean
  readonly json?: boolean
}

/**
 * Registers `loadledger reproduce [NAME] [--list] [--json]` over `registry` (default: every
 * registered scenario; a test passes its own).
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./reproduce.js"
 * const program = new Command()
 * register(program)
 * const reproduce = program.commands[0]!
 * reproduce.name() // => "reproduce"
 * reproduce.options.map((o) => o.long) // => ["--list", "--json"]
 * ```
 *
 * @since 0.7.0
 */
export const register = (
  program: Command,
  registry: ReadonlyArray<ReproduceScenario> = scenarios()
): void => {
  program
    .command("reproduce")
    .description(
      "replay a published end-to-end result through the model: published beside modelled, as ratios"
    )
    .argument("[name]", "the scenario (see --list)")
    .option("--list", "name every scenario with its source")
    .option(
      "--json",
      "print JSON (with --list: the scenarios; with NAME: its rows {metric, published, modelled})"
    )
    .addHelpText("after", examplesHelp("reproduce"))
    .action(async (name: string | undefined, opts: Opts) => {
      const all = registry
      if (opts.list === true || name === undefined) {
        if (name !== undefined) return fail("reproduce: give either NAME or --list, not both")
        process.stdout.write(
          opts.json === true
            ? `${JSON.stringify(all.map((s) => ({ name: s.name, title: s.title, source: s.source, assumptions: s.assumptions })))}\n`
            : `${listText(all)}\n`
        )
        return
      }
      const scenario = all.find((s) => s.name === name)
      if (scenario === undefined) {
        const names = all.map((s) => s.name)
        const guess = didYouMean(name, names)
        return fail(
          `reproduce: unknown scenario "${name}"${guess === undefined ? "" : ` (did you mean "${guess}"?)`}; ` +
            `one of ${names.join(", ") || "(none registered)"}`
        )
      }
      const rows = await scenario.run()
      process.stdout.write(
        opts.json === true
          ? `${JSON.stringify(rowsJson(scenario, rows), null, 2)}\n`
          : `${rowsText(scenario, rows)}\n`
      )
    })
}
