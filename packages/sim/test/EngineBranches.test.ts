/**
 * Engines are modules (issue 29): no source file of the simulator outside `src/engines/` branches
 * on an engine's name (`engine === "vllm"`, `"sglang" !==`, `case "vllm":`, `switch (…engine…)`);
 * what differs between engines is asked of the engine model from the registry.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { engineNames } from "../src/index.js"

const src = fileURLToPath(new URL("../src/", import.meta.url))
const enginesDir = join(src, "engines")

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((e) => {
    const p = join(dir, e)
    if (statSync(p).isDirectory()) return p === enginesDir ? [] : files(p)
    return p.endsWith(".ts") ? [p] : []
  })

/** The code of a source file without its comments (docstrings may name engines). */
const code = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1")

const names = [...engineNames, "trtllm"].join("|")
const branches = [
  new RegExp(`[=!]==?\\s*["'\`](${names})["'\`]`),
  new RegExp(`["'\`](${names})["'\`]\\s*[=!]==?`),
  new RegExp(`case\\s+["'\`](${names})["'\`]`),
  /switch\s*\([^)]*engine[^)]*\)/i
]

/** The lines of `text`'s code that branch on an engine's name. */
const engineBranches = (text: string): Array<string> =>
  code(text)
    .split("\n")
    .filter((l) => branches.some((b) => b.test(l)))
    .map((l) => l.trim())

describe("no branch on an engine's name outside src/engines/", () => {
  it("finds the branches it looks for", () => {
    expect(
      engineBranches(
        [
          'if (c.engine === "vllm") x()',
          "const a = 'sglang' !== engine",
          'switch (c.engine) { case "sglang": }',
          '/** c.engine === "vllm" in a comment */',
          'const rows = "vllm-counts"'
        ].join("\n")
      )
    ).toEqual([
      'if (c.engine === "vllm") x()',
      "const a = 'sglang' !== engine",
      'switch (c.engine) { case "sglang": }'
    ])
  })

  it("finds none in the simulator's sources", () => {
    const found = files(src).flatMap((f) =>
      engineBranches(readFileSync(f, "utf8")).map((l) => `${relative(src, f)}: ${l}`)
    )
    expect(found).toEqual([])
    expect(files(src).length).toBeGreaterThan(20)
  })
})
