/**
 * `pnpm bench`: runs every registered benchmark (`bench/registry.ts`), or only those whose name
 * contains one of the command-line arguments.
 *
 * @since 0.1.0
 */

import { sink } from "./harness.js"
import { benchmarks } from "./registry.js"

const filters = process.argv.slice(2)
const t0 = performance.now()
for (const b of benchmarks) {
  if (filters.length > 0 && !filters.some((f) => b.name.includes(f))) continue
  process.stdout.write(`\n## ${b.name}\n`)
  b.run()
}
process.stdout.write(
  `\n(total ${((performance.now() - t0) / 1000).toFixed(1)} s, node ${process.version}, sink ${sink})\n`
)
