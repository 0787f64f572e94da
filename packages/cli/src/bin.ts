#!/usr/bin/env node
/**
 * The `loadledger` executable: runs `main` on the process arguments and exits with its code.
 *
 * @since 0.1.0
 */
import { main } from "./index.js"

main(process.argv).then((code) => {
  process.exitCode = code
})
