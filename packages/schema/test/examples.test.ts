/**
 * Every `@example` in packages/schema/src runs as a test: each line ending in `// <value>` (or
 * followed by a comment-only line `// <value>`) is checked with `toEqual`.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as Effect from "effect"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import * as Schema from "../src/index.js"

const srcDir = new URL("../src/", import.meta.url)
const mods: Record<string, unknown> = { "@loadledger/schema": Schema, effect: Effect }

/** The ```ts blocks of every `@example` in a source file, with the export each one documents. */
const examples = (file: string): Array<{ name: string; code: string }> => {
  const text = readFileSync(new URL(file, srcDir), "utf8")
  const out: Array<{ name: string; code: string }> = []
  for (const m of text.matchAll(/\/\*\*([\s\S]*?)\*\/\s*export (?:const|function|interface|type) (\w+)/g)) {
    const doc = m[1]!.replace(/^\s*\* ?/gm, "")
    const ex = /@example\s*```ts\n([\s\S]*?)```/.exec(doc)
    if (ex !== null) out.push({ name: m[2]!, code: ex[1]! })
  }
  return out
}

/** Rewrite an example into a function body: imports -> module lookups, `expr // v` -> check. */
const instrument = (code: string): string => {
  const lines = code.split("\n")
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]!
    const imp = /^import \{([^}]*)\} from "([^"]+)"$/.exec(l.trim())
    if (imp !== null) {
      out.push(`const {${imp[1]}} = __mods[${JSON.stringify(imp[2])}];`)
      continue
    }
    const next = lines[i + 1]?.trim()
    if (next !== undefined && /^\/\/ /.test(next) && !/\/\/ /.test(l) && l.trim() !== "") {
      l = `${l} ${next}`
      i++
    }
    const chk = /^(?!\s*(?:const|let|import|\/\/))(.*?)\s*\/\/ (.+)$/.exec(l)
    if (chk !== null) out.push(`__eq(${chk[1]}, ${chk[2]}, ${JSON.stringify(l.trim())});`)
    else out.push(l)
  }
  return ts.transpileModule(out.join("\n"), { compilerOptions: { target: ts.ScriptTarget.ES2022 } })
    .outputText
}

const files = readdirSync(srcDir).filter((f) => f.endsWith(".ts"))

describe("docstring examples of @loadledger/schema", () => {
  const all = files.flatMap((f) => examples(f).map((e) => ({ ...e, file: f })))
  it("there is an example on most exports", () => expect(all.length).toBeGreaterThan(40))
  for (const { file, name, code } of all) {
    it(`${file} ${name}`, () => {
      let checks = 0
      const eq = (actual: unknown, expected: unknown, line: string) => {
        checks++
        expect(actual, line).toEqual(expected)
      }
      new Function("__mods", "__eq", instrument(code))(mods, eq)
      expect(checks, "an example should show at least one value").toBeGreaterThan(0)
    })
  }
})

describe("README usage block", () => {
  it("runs and shows the values it claims", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
    const code = /## Usage\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!
    let checks = 0
    new Function("__mods", "__eq", instrument(code))(mods, (a: unknown, e: unknown, line: string) => {
      checks++
      expect(a, line).toEqual(e)
    })
    expect(checks).toBe(3)
  })
})
