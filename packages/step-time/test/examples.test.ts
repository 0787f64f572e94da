/**
 * Every `@example` in packages/step-time/src runs as a test: each `console.log(...) // <printed>`
 * line is checked against what it prints (numbers compared numerically, a trailing
 * parenthetical is commentary).
 */
import { readdirSync, readFileSync } from "node:fs"
import { format } from "node:util"
import * as Effect from "effect"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import * as StepTime from "../src/index.js"

const srcDir = new URL("../src/", import.meta.url)
const mods: Record<string, unknown> = { "@loadledger/step-time": StepTime, effect: Effect }

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

const instrument = (code: string): string => {
  const out: Array<string> = []
  for (const l of code.split("\n")) {
    const imp = /^import \{([^}]*)\} from "([^"]+)"$/.exec(l.trim())
    if (imp !== null) {
      out.push(`const {${imp[1]!.replace(/\btype \w+,?/g, "")}} = __mods[${JSON.stringify(imp[2])}];`)
      continue
    }
    const log = /^(\s*)console\.log\((.*)\)\s*\/\/ (.+)$/.exec(l)
    if (log !== null) out.push(`${log[1]}__check([${log[2]}], ${JSON.stringify(log[3])});`)
    else out.push(l)
  }
  return ts.transpileModule(out.join("\n"), { compilerOptions: { target: ts.ScriptTarget.ES2022 } })
    .outputText
}

const same = (printed: string, expectedRaw: string): boolean => {
  let expected = expectedRaw.replace(/\s+\([^)]*\)\s*$/, "").trim()
  if (/^".*"$/.test(expected)) expected = expected.slice(1, -1)
  if (printed === expected) return true
  const a = printed.split(/\s+/)
  const b = expected.split(/\s+/)
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const nx = Number(x)
      const ny = Number(b[i])
      return (
        x === b[i] || (Number.isFinite(nx) && Number.isFinite(ny) && Math.abs(nx - ny) <= 1e-9 * Math.abs(ny))
      )
    })
  )
}

const files = readdirSync(srcDir).filter((f) => f.endsWith(".ts"))

describe("docstring examples of @loadledger/step-time", () => {
  const all = files.flatMap((f) => examples(f).map((e) => ({ ...e, file: f })))
  it("most exports have an example", () => expect(all.length).toBeGreaterThan(30))
  for (const { file, name, code } of all) {
    it(`${file} ${name}`, () => {
      let checks = 0
      const check = (args: ReadonlyArray<unknown>, expected: string) => {
        checks++
        const printed = format(...args)
        expect(same(printed, expected), `printed ${printed}, example says ${expected}`).toBe(true)
      }
      new Function("__mods", "__check", instrument(code))(mods, check)
      expect(checks, "an example should show at least one value").toBeGreaterThan(0)
    })
  }
})
