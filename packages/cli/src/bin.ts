#!/usr/bin/env node
import { main } from "./index.js"

main(process.argv).then((code) => {
  process.exitCode = code
})
