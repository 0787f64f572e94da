/**
 * `pnpm bench:stepfit [DIR...]`: leave-one-model-out and leave-one-GPU-out MAPE of the shape-aware
 * step-time fit (`fitShape`) per held-out (model, phase, GPU) cell over calibration folders
 * (default: fixtures/calibration and, when present, ../shared/calibration; each holds splitwise/
 * and vidur/ CSVs, read as `loadledger calibrate --thin` reads them; a file name seen in an earlier
 * folder is skipped). Prints a markdown table; each cell over 10% names how far it misses and the
 * parameters its predictions lean on that the training rows did not identify. Nothing is fitted on
 * a held-out row.
 *
 * @since 0.7.0
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import {
  type CalibrationSample,
  type HeldOutCell,
  heldOutCells,
  splitwiseSamples,
  thinSamples,
  vidurCollectiveSamples,
  vidurFileInfo,
  vidurMlpSamples
} from "@loadledger/step-time"
import { Result } from "effect"

const repo = new URL("../", import.meta.url).pathname
const args = process.argv.slice(2)
const dirs =
  args.length > 0
    ? args
    : [join(repo, "fixtures/calibration"), join(repo, "../shared/calibration")].filter((d) => existsSync(d))

const skipped: Array<string> = []

const load = (): { samples: Array<CalibrationSample>; files: Array<string> } => {
  const seen = new Set<string>()
  const samples: Array<CalibrationSample> = []
  const files: Array<string> = []
  for (const dir of dirs) {
    for (const sub of ["splitwise", "vidur"]) {
      const d = join(dir, sub)
      if (!existsSync(d)) continue
      for (const f of readdirSync(d).sort()) {
        if (!f.endsWith(".csv") || seen.has(`${sub}/${f}`)) continue
        seen.add(`${sub}/${f}`)
        files.push(join(d, f))
        const text = readFileSync(join(d, f), "utf8")
        if (sub === "splitwise") {
          samples.push(...Result.getOrThrow(splitwiseSamples(text, {})))
          continue
        }
        const info = vidurFileInfo(f)
        if (info?.kind === "mlp")
          samples.push(...Result.getOrThrow(vidurMlpSamples(text, { gpu: info.gpu, model: info.model })))
        else if (info !== undefined) {
          const r = vidurCollectiveSamples(text, { gpu: info.gpu })
          if (Result.isFailure(r)) {
            skipped.push(`${f} (${r.failure.message})`)
            files.pop()
          } else samples.push(...r.success)
        }
      }
    }
  }
  return { samples: thinSamples(samples), files }
}

/**
 * The parameters a cell's predictions lean on (>= 5% of a row's time) that the training rows did
 * not identify, each with its status and its largest share of a row's time; or what was pooled.
 */
const unidentified = (c: HeldOutCell): string => {
  const worst = new Map<string, { status: string; share: number }>()
  const other = new Set<string>()
  for (const w of c.warnings) {
    const m = /^(.+?) carries (\d+)% of the time and is (NOT IDENTIFIED|weak|prior)/.exec(w)
    if (m !== null) {
      const status = m[3] === "NOT IDENTIFIED" ? "not identified" : m[3]!
      const prev = worst.get(m[1]!)
      if (prev === undefined || Number(m[2]) > prev.share) worst.set(m[1]!, { status, share: Number(m[2]) })
    } else if (/is not in the fit/.test(w)) other.add("GPU efficiencies pooled from the other GPUs")
    else if (/was not measured on/.test(w)) other.add("stack overheads pooled from the other GPUs")
  }
  const named = [...worst]
    .sort((a, b) => b[1].share - a[1].share)
    .map(([n, v]) => `${n} ${v.status} (up to ${v.share}%)`)
  return [...other, ...named].join("; ")
}

const table = (title: string, cells: ReadonlyArray<HeldOutCell>): string => {
  const rows = cells.map(
    (c) =>
      `| ${c.fold} | ${c.model} | ${c.source} ${c.phase} | ${c.gpu} | ${c.rows} | ${c.mape.toFixed(1)} | ${c.bias.toFixed(1)} | ${c.mape <= 10 ? "ok" : `+${(c.mape - 10).toFixed(1)}: ${unidentified(c) || "all identified"}`} |`
  )
  const misses = cells.filter((c) => c.mape > 10).length
  return [
    `### ${title} (${cells.length} cells, ${misses} over 10%)`,
    "",
    "| held out | model | phase | GPU | rows | MAPE % | bias % | over 10%: by how much; what is not identified |",
    "|---|---|---|---|---|---|---|---|",
    ...rows
  ].join("\n")
}

const start = performance.now()
const { samples, files } = load()
const lomo = Result.getOrThrow(heldOutCells(samples, { by: "model", kind: "shape" }))
const logo = Result.getOrThrow(heldOutCells(samples, { by: "gpu", kind: "shape" }))
process.stdout.write(
  `shape-aware fit, ${samples.length} rows (thinned) from ${files.length} files in ${dirs.join(", ")}\n\n` +
    `${table("leave-one-model-out", lomo)}\n\n${table("leave-one-GPU-out", logo)}\n\n` +
    (skipped.length > 0 ? `skipped: ${skipped.join(", ")}\n` : "") +
    `(${((performance.now() - start) / 1000).toFixed(1)} s)\n`
)
