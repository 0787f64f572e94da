#!/usr/bin/env node
/**
 * The `loadledger` executable: runs `main` on the process arguments and exits with its code.
 * A closed stdout (EPIPE, as when piped into `head`) ends the command quietly with status 0.
 *
 * @since 0.1.0
 */
import { main } from "./index.js"

const quietOnEpipe = (e: NodeJS.ErrnoException): void => {
  if (e.code === "EPIPE") process.exit(0)
  throw e
}
process.stdout.on("error", quietOnEpipe)
process.stderr.on("error", quietOnEpipe)

main(process.argv).then((code) => {
  process.exitCode = code
})
