/**
 * `loadledger compare`: two or more policies on one trace by goodput under a latency SLO, every
 * pair with its paired verdict (the goodput machinery of `loadledger goodput`, issue 27).
 *
 * @since 0.6.0
 */
import type { Command } from "commander"
import { examplesHelp } from "../internal/examples.js"
import { addPolicyFlags, DEFAULT_POLICIES } from "../internal/policyFlags.js"
import { type GoodputCommandOptions, runGoodput } from "./goodput.js"
import { addGoodputFlags, SLO_HELP } from "./goodputFlags.js"

/**
 * Registers `loadledger compare --trace FILE [--policies a,b,...] [--slo ...]`: `goodput` with at
 * least two policies, the attainment curves only with `--report`, and a table of every pair.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./compare.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "compare"
 * program.commands[0]!.options.slice(0, 3).map((o) => o.long) // => ["--policies", "--policy", "--trace"]
 * ```
 *
 * @since 0.6.0
 */
export const register = (program: Command): void => {
  const cmd = program
    .command("compare")
    .description(
      "compare two or more policies on a trace by goodput under a latency SLO: every pair's paired verdict"
    )
    .addHelpText(
      "after",
      `\nEach policy's goodput (the largest arrival rate at which the SLO is met) is found on --windows
disjoint windows of the trace; each pair is compared on the same windows (the geometric mean of the
per-window ratios, with a paired t interval) and called better or worse only when the interval
excludes no difference. The ranked board (with the balance bound and the clairvoyant reference) comes
first, then every pair. Attainment curves are drawn only for --report. loadledger goodput is the
same search over a leaderboard.
${SLO_HELP}`
    )
  addPolicyFlags(cmd, {
    main: "policies",
    description: "two or more comma-separated policies, or all (default: the demo's five references)",
    fallback: DEFAULT_POLICIES
  })
  addGoodputFlags(cmd)
    .addHelpText("after", examplesHelp("compare"))
    .action(async (opts: GoodputCommandOptions) => {
      await runGoodput({ ...opts, curves: opts.curves && opts.report !== undefined, pairs: true })
    })
}
