// Start-up of the built CLI (`pnpm bench:start`): the cases and targets are in
// `bench/startupCases.ts` (also printed by `pnpm bench:sim`). Run `pnpm build` first.
import { loadavg } from "node:os"
import { measureStartup } from "./startupCases.js"

console.log(
  `load average: ${loadavg()
    .map((v) => v.toFixed(1))
    .join(" ")}`
)
for (const r of measureStartup()) {
  const verdict =
    r.targetMs === undefined ? "" : ` (target ${r.targetMs} ms: ${r.wallMs <= r.targetMs ? "met" : "missed"})`
  console.log(
    `${r.label.padEnd(38)} median ${r.wallMs.toFixed(0).padStart(5)} ms wall, ${Number.isNaN(r.cpuMs) ? "    -" : r.cpuMs.toFixed(0).padStart(5)} ms CPU${verdict}`
  )
}
