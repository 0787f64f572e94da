/**
 * No import circle across the source files of the packages (issue 29, "No circles"): every
 * strongly connected component of the import graph of `packages/*\/src` (type-only imports and
 * lazy `import()` included, see `importCycles.ts`) fails this test with its files and one circle.
 *
 * The fix is nearly always the same: the types two files share go into a leaf module below both
 * (as `live/src/Types.ts`, `policies/src/PolicyEntry.ts`, `testing/src/LawTypes.ts`,
 * `sim/src/TraceRecord.ts` do), and each file imports the leaf.
 */
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { describeCycle, type ImportCycle, importCycles, importGraph } from "./importCycles.js"

const repoRoot = fileURLToPath(new URL("..", import.meta.url))

describe("import circles", () => {
  const cycles: ReadonlyArray<ImportCycle> = importCycles(importGraph(repoRoot))

  it("finds a circle, and only a circle (the detector itself)", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "d.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]]
    ])
    expect(importCycles(graph)).toEqual([
      { files: ["a.ts", "b.ts", "c.ts"], path: ["a.ts", "b.ts", "c.ts", "a.ts"] },
      { files: ["e.ts"], path: ["e.ts", "e.ts"] }
    ])
    expect(
      importCycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []]
        ])
      )
    ).toEqual([])
  })

  it("sees type-only imports across packages' files", () => {
    const graph = importGraph(repoRoot)
    // a type-only import
    expect(graph.get("live/src/Route.ts")).toContain("live/src/Types.ts")
    // a package import resolves to the package's source entry
    expect(graph.get("live/src/Route.ts")).toContain("policies/src/index.ts")
  })

  it("has no circle across files", () => {
    expect(cycles.map(describeCycle), "import circles (move the shared types into a leaf module)").toEqual([])
  })
})
