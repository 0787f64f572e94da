/**
 * `loadledger conformance FILES...`: replays reference vector files against the policies and models and prints one line per case, `N passed, N failed` last.
 *
 * @since 0.1.0
 */
import type { Command } from "commander"
import { runVectors } from "../conformance/index.js"
import { examplesHelp } from "../internal/examples.js"
import { readText } from "../internal/readInput.js"
import { escapeLines } from "../internal/terminalText.js"

/**
 * Registers `loadledger conformance FILE...`: detects each file's vector format, replays every
 * case, prints one line per failing case (id, first differing op and field), then
 * `N passed, N failed`; exit code 1 if anything failed or a file is not a known format.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { register } from "./conformance.js"
 * const program = new Command()
 * register(program)
 * program.commands[0]!.name() // => "conformance"
 * program.commands[0]!.usage() // => "[options] <files...>"
 * ```
 *
 * @since 0.1.0
 */
export const register = (program: Command): void => {
  program
    .command("conformance")
    .description("replay upstream golden vectors (SGLang / vLLM reference files) against loadledger")
    .argument("<files...>", "vector files (JSON)")
    .addHelpText("after", examplesHelp("conformance"))
    .action((files: ReadonlyArray<string>) => {
      let passed = 0
      let failed = 0
      for (const file of files) {
        const text = readText(file)
        let doc: unknown
        try {
          doc = JSON.parse(text)
        } catch (e) {
          throw new Error(`${file}: not JSON (${e instanceof Error ? e.message : String(e)})`)
        }
        const out = runVectors(doc)
        if (out === undefined) throw new Error(`${file}: not a known golden-vector format`)
        for (const r of out.results) {
          if (r.ok) passed++
          else {
            failed++
            process.stdout.write(escapeLines(`FAIL ${out.format} ${r.id}: ${r.firstDiff ?? "differs"}\n`))
          }
        }
      }
      process.stdout.write(`${passed} passed, ${failed} failed\n`)
      if (failed > 0) process.exitCode = 1
    })
}
