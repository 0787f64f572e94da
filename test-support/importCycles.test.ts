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

/**
 * Circles known when the check came in, each in files another change was rewriting at the time
 * (issue 29's parallel work): listed so the check guards everything else now. Each entry is the
 * circle's exact file set; the second test fails once an entry no longer occurs, so the list only
 * shrinks. Remove an entry with the change that breaks its circle; never add one.
 */
const known: ReadonlyArray<{ readonly files: ReadonlyArray<string>; readonly why: string }> = [
  {
    files: ["policies/src/own/Scored.ts", "policies/src/own/internal/ScoreCore.ts"],
    why: "own policies, being rewritten as terms (ScoreCore imports ScoredOptions back)"
  },
  {
    files: ["policies/src/own/internal/ChargeLists.ts", "policies/src/own/internal/InflightCharges.ts"],
    why: "own policies, being rewritten as terms (one charge ledger replaces both)"
  },
  {
    files: ["sim/src/engines/vllm/VllmCoordinator.ts", "sim/src/engines/vllm/internal/coordMachine.ts"],
    why: "vLLM coordinator (coordMachine imports the coordinator types back): a type move still to do"
  },
  {
    files: ["policies/src/own/PolicyConfig.ts", "policies/src/own/internal/buildConfig.ts"],
    why: "own-policy configs (buildConfig imports the config's types back): a type move still to do"
  },
  {
    files: [
      "policies/src/own/StepTimeAware.ts",
      "policies/src/own/internal/stepRoute.ts",
      "policies/src/own/internal/stepState.ts"
    ],
    why: "step-time-aware split (its internals import the state type back): a type move still to do"
  }
]

const key = (files: ReadonlyArray<string>): string => [...files].sort().join(" ")
const knownKeys = new Set(known.map((k) => key(k.files)))

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

  it("has no circle across files but the known ones", () => {
    const unexpected = cycles.filter((c) => !knownKeys.has(key(c.files)))
    expect(
      unexpected.map(describeCycle),
      "import circles (move the shared types into a leaf module)"
    ).toEqual([])
  })

  it("lists as known only circles that still exist", () => {
    const present = new Set(cycles.map((c) => key(c.files)))
    const gone = known.filter((k) => !present.has(key(k.files))).map((k) => k.files.join(" <-> "))
    expect(gone, "these circles are gone (or changed): remove them from `known`").toEqual([])
  })
})
