/**
 * The text of `loadledger --version`, in a module that loads nothing else (no commander), so the
 * executable can answer `--version` before it loads the command table.
 *
 * @internal
 */
import { createRequire } from "node:module"

const PACKAGES = ["cli", "schema", "sim", "policies", "step-time", "live"] as const

/** `loadledger 0.1.0` then one `@loadledger/<pkg> <version>` line per package (read from package.json). */
export const versionText = (): string => {
  const require = createRequire(import.meta.url)
  const lines = PACKAGES.map((p) => {
    try {
      const v = (require(`@loadledger/${p}/package.json`) as { version: string }).version
      return `@loadledger/${p} ${v}`
    } catch {
      return `@loadledger/${p} (not found)`
    }
  })
  // the package by its own name (exports lists ./package.json): the same from src/ and dist/
  const own = (require("@loadledger/cli/package.json") as { version: string }).version
  return [`loadledger ${own}`, ...lines].join("\n")
}
