/**
 * The policy tables of `pnpm bench`: one row per (policy, ranks) of ns per route next to its
 * floor, for the sources under tsx, the built `dist`, or both side by side (`--compare`).
 *
 * @since 0.1.0
 */
import { benchModes, inChild, type Mode, sizes } from "./harness.js"

/** One row of a policy table: ranks, ns per route, the floor's ns. */
export type Row = readonly [ranks: number, ns: number, floorNs: number]

/**
 * Print one row per (policy, ranks) of ns per operation next to its floor and the ratio, ranks in
 * the outer order. With `limit`, two more columns say the target ratio at that rank count and
 * whether it was met.
 */
export const printRatioTable = (
  names: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<Row>>,
  limit?: (ranks: number) => number | undefined,
  rankSizes: ReadonlyArray<number> = sizes
): void => {
  const widths = [Math.max(6, ...names.map((x) => x.length)) + 2, 6, 10, 10, 7, 7]
  const line = (xs: ReadonlyArray<string>) =>
    process.stdout.write(
      `${xs.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i] ?? 7))).join(" ")}\n`
    )
  line(["policy", "ranks", "ns/route", "floor ns", "ratio", ...(limit ? ["target", "met"] : [])])
  rankSizes.forEach((n, k) => {
    names.forEach((name, i) => {
      const [, ns, floor] = rows[i]![k]!
      const ratio = ns / floor
      const cells = [name, String(n), ns.toFixed(1), floor.toFixed(1), `${ratio.toFixed(2)}x`]
      if (limit) {
        const l = limit(n)
        cells.push(l === undefined ? "-" : `<=${l}x`, l === undefined ? "-" : ratio <= l ? "yes" : "MISSED")
      }
      line(cells)
    })
  })
}

/**
 * Measure `module[exportName](name)` (rows of `Row`) for each name, each in a child process of its
 * own, in every mode of the run, and print the table: one mode as {@link printRatioTable}; with
 * both modes, one row per (policy, ranks) with the built and tsx figures side by side, each
 * against its own floor, and built / tsx. Returns the rows per mode.
 */
export const policyTable = (
  moduleUrl: string,
  exportName: string,
  names: ReadonlyArray<string>,
  limit?: (ranks: number) => number | undefined,
  rankSizes: ReadonlyArray<number> = sizes
): Partial<Record<Mode, ReadonlyArray<ReadonlyArray<Row>>>> => {
  const modes = benchModes()
  const out: Partial<Record<Mode, ReadonlyArray<ReadonlyArray<Row>>>> = {}
  for (const mode of modes)
    out[mode] = names.map((name) => inChild<Array<Row>>(moduleUrl, exportName, name, mode))
  if (modes.length === 1) {
    process.stdout.write(`(${modes[0] === "built" ? "built dist" : "sources under tsx"})\n`)
    printRatioTable(names, out[modes[0]!]!, limit, rankSizes)
  } else printCompareTable(names, out.built!, out.tsx!, limit, rankSizes)
  return out
}

/**
 * One row per (policy, ranks): built ns and its ratio to the built floor, tsx ns and its ratio to
 * the tsx floor, built / tsx (below 1: the build is faster), and with `limit` the target and
 * whether the built code meets it.
 */
export const printCompareTable = (
  names: ReadonlyArray<string>,
  built: ReadonlyArray<ReadonlyArray<Row>>,
  tsx: ReadonlyArray<ReadonlyArray<Row>>,
  limit?: (ranks: number) => number | undefined,
  rankSizes: ReadonlyArray<number> = sizes
): void => {
  const widths = [Math.max(6, ...names.map((x) => x.length)) + 2, 6, 9, 7, 9, 7, 9, 7, 9]
  const line = (xs: ReadonlyArray<string>) =>
    process.stdout.write(
      `${xs.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i] ?? 7))).join(" ")}\n`
    )
  line([
    "policy",
    "ranks",
    "built ns",
    "/floor",
    "tsx ns",
    "/floor",
    "built/tsx",
    ...(limit ? ["target", "built met"] : [])
  ])
  rankSizes.forEach((n, k) => {
    names.forEach((name, i) => {
      const [, bNs, bFloor] = built[i]![k]!
      const [, tNs, tFloor] = tsx[i]![k]!
      const cells = [
        name,
        String(n),
        bNs.toFixed(1),
        `${(bNs / bFloor).toFixed(2)}x`,
        tNs.toFixed(1),
        `${(tNs / tFloor).toFixed(2)}x`,
        (bNs / tNs).toFixed(2)
      ]
      if (limit) {
        const l = limit(n)
        cells.push(
          l === undefined ? "-" : `<=${l}x`,
          l === undefined ? "-" : bNs / bFloor <= l ? "yes" : "MISSED"
        )
      }
      line(cells)
    })
  })
}
