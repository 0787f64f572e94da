#!/usr/bin/env node
/**
 * The `loadledger` executable: runs `main` on the process arguments and exits with its code.
 * A closed stdout (EPIPE, as when piped into `head`) ends the command quietly with status 0.
 * `loadledger --version` (or `-V`) alone is answered before the command table and commander are
 * loaded: the same text `main` prints, in a third of the time.
 *
 * @since 0.1.0
 */
export {}

const quietOnEpipe = (e: NodeJS.ErrnoException): void => {
  if (e.code === "EPIPE") process.exit(0)
  throw e
}
process.stdout.on("error", quietOnEpipe)
process.stderr.on("error", quietOnEpipe)

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { versionText } = await import("./internal/version.js")
  process.stdout.write(`${versionText()}\n`)
} else {
  const { main } = await import("./index.js")
  process.exitCode = await main(process.argv)
}
