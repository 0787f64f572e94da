/**
 * `pnpm bench`: runs every registered benchmark (`bench/registry.ts`), or only those whose name
 * contains one of the command-line arguments. The policy tables measure the sources under tsx by
 * default; `--built` measures the built `dist` instead (run `pnpm build` first) and `--compare`
 * both, side by side (`pnpm bench:compare` builds, then compares). The other benchmarks run the
 * sources under tsx in this process.
 *
 * @since 0.1.0
 */

import { existsSync } from "node:fs"
import { sink } from "./harness.js"
import { benchmarks } from "./registry.js"

const args = process.argv.slice(2)
const built = args.includes("--built")
const compare = args.includes("--compare")
process.env.LOADLEDGER_BENCH_MODES = compare ? "built,tsx" : built ? "built" : "tsx"
if (built || compare) {
  const missing = ["schema", "policies", "step-time", "sim", "live"].filter(
    (p) => !existsSync(new URL(`../packages/${p}/dist/index.js`, import.meta.url))
  )
  if (missing.length > 0) {
    process.stderr.write(`no built dist for ${missing.join(", ")}: run \`pnpm build\` first\n`)
    process.exit(2)
  }
}
const filters = args.filter((a) => !a.startsWith("--"))
const t0 = performance.now()
for (const b of benchmarks) {
  if (filters.length > 0 && !filters.some((f) => b.name.includes(f))) continue
  process.stdout.write(`\n## ${b.name}\n`)
  b.run()
}
process.stdout.write(
  `\n(total ${((performance.now() - t0) / 1000).toFixed(1)} s, node ${process.version}, sink ${sink})\n`
)
