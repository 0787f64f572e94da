/**
 * One runner for the `@example` blocks of the docstrings and the README Usage blocks of every
 * package (see CONTRIBUTING.md, "Runnable examples"). Not a published package.
 *
 * Convention: an example is a ```ts block under `@example`. It imports by package name
 * (`@loadledger/x`, `effect`, `fast-check`, `node:*`; a module that is not exported from its
 * package entry, like the CLI's commands, by a path relative to its file), runs top to bottom
 * (top-level `await` allowed) and must not throw. A checked value is written `expr // => value`:
 *
 * - `expr // => value` checks the statement `expr`; `const x = expr // => value` checks `x`;
 *   `console.log(expr) // => value` checks `expr` (one argument).
 * - `value` is a JavaScript expression evaluated in the example's scope (`3`, `"sglang"`,
 *   `[1, 2]`, `{ _tag: "Routed", rank: 1 }`, `undefined`), compared with vitest's `toEqual`;
 *   numbers are equal within a relative 1e-9.
 * - A value too long for one line continues on the comment lines right below (`//   ...`) until it
 *   parses. `// => value` alone on the line right below a statement checks that statement.
 * - A bare literal after `//` (`expr // 3`) is rejected: it reads like a check and is not one.
 *
 * The blocks are also type-checked (`typecheckExamples`), every export must have a docstring
 * (`undocumentedExports`), every public value export an `@example` (`exportsWithoutExample`) and
 * every source file a module docstring (`filesWithoutModuleDoc`).
 *
 * Over 300 lines: one concept (running and checking docstring examples); extraction, instrumentation, type-checking and the suite share the example format it defines.
 *
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { resolve as resolveModule } from "import-meta-resolve"
import ts from "typescript"
import { describe, expect, it } from "vitest"

/** One ```ts block of an `@example` (or of a README). */
export interface DocExample {
  /** `src/Foo.ts SymbolName` (with `#2`, `#3` for further blocks of the same symbol). */
  readonly name: string
  /** Where the block is, `packages/x/src/Foo.ts:42`. */
  readonly location: string
  readonly code: string
  /** The file the block is in: relative imports (`./Foo.js`) resolve against it. */
  readonly file: URL
}

const repoRoot = new URL("../", import.meta.url)
const where = (file: URL, line: number): string =>
  `${relative(fileURLToPath(repoRoot), fileURLToPath(file))}:${line}`

const sourceFiles = (dir: URL): Array<URL> =>
  readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const url = new URL(entry, dir)
      if (statSync(url).isDirectory())
        return entry === "internal" ? [] : sourceFiles(new URL(`${entry}/`, dir))
      return entry.endsWith(".ts") && !entry.endsWith(".d.ts") ? [url] : []
    })

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

const declaredName = (node: ts.Statement): string => {
  if (ts.isVariableStatement(node))
    return node.declarationList.declarations.map((d) => d.name.getText()).join(",")
  if (ts.isExportDeclaration(node) && node.exportClause !== undefined && ts.isNamedExports(node.exportClause))
    return node.exportClause.elements.map((e) => e.name.text).join(",")
  const name = (node as { name?: ts.Node }).name
  return name !== undefined ? name.getText() : "default"
}

/** The ```ts blocks of the `@example` sections of one JSDoc comment, with their offsets in it. */
const exampleBlocks = (comment: string): Array<{ code: string; offset: number }> => {
  const out: Array<{ code: string; offset: number }> = []
  for (const section of comment.matchAll(/@example\b([\s\S]*?)(?=\n\s*\*\s*@(?!example\b)\w|$)/g)) {
    for (const block of section[1]!.matchAll(/```(?:ts|typescript)\s*\n([\s\S]*?)\n\s*\*?\s*```/g)) {
      const code = block[1]!
        .split("\n")
        .map((l) => l.replace(/^\s*\* ?/, ""))
        .join("\n")
      out.push({ code, offset: section.index! + "@example".length + block.index! })
    }
  }
  return out
}

/** Every ```ts block under `@example` of every exported symbol of `src/**` (not `internal/`). */
export const extractDocExamples = (pkgDir: URL): Array<DocExample> => {
  const out: Array<DocExample> = []
  for (const file of sourceFiles(new URL("src/", pkgDir))) {
    const text = readFileSync(file, "utf8")
    const sf = ts.createSourceFile(file.pathname, text, ts.ScriptTarget.Latest, true)
    const seen = new Set<string>()
    const rel = relative(fileURLToPath(pkgDir), fileURLToPath(file))
    for (const stmt of sf.statements) {
      if (!isExported(stmt)) continue
      const comments = ts.getLeadingCommentRanges(text, stmt.pos) ?? []
      const doc = comments.filter((c) => text.startsWith("/**", c.pos)).at(-1)
      if (doc === undefined) continue
      const blocks = exampleBlocks(text.slice(doc.pos, doc.end))
      const symbol = declaredName(stmt)
      blocks.forEach(({ code, offset }, i) => {
        if (seen.has(code)) return // overload signatures repeat one docstring
        seen.add(code)
        const line = sf.getLineAndCharacterOfPosition(doc.pos + offset).line + 2
        out.push({
          name: `${rel} ${symbol}${i > 0 ? `#${i + 1}` : ""}`,
          location: where(file, line),
          code,
          file
        })
      })
    }
  }
  return out
}

/**
 * Exports of `src/**` (not `internal/`) that have no docstring at all: declarations, and named
 * re-exports (`export { x } from`) outside the package entry `src/index.ts`.
 */
export const undocumentedExports = (pkgDir: URL): Array<string> => {
  const out: Array<string> = []
  const entry = new URL("src/index.ts", pkgDir).href
  for (const file of sourceFiles(new URL("src/", pkgDir))) {
    const text = readFileSync(file, "utf8")
    const sf = ts.createSourceFile(file.pathname, text, ts.ScriptTarget.Latest, true)
    for (const stmt of sf.statements) {
      const reexport =
        ts.isExportDeclaration(stmt) &&
        stmt.exportClause !== undefined &&
        ts.isNamedExports(stmt.exportClause) &&
        file.href !== entry
      if (!isExported(stmt) && !reexport) continue
      const comments = ts.getLeadingCommentRanges(text, stmt.pos) ?? []
      if (!comments.some((c) => text.startsWith("/**", c.pos)))
        out.push(
          `${where(file, sf.getLineAndCharacterOfPosition(stmt.getStart()).line + 1)} ${declaredName(stmt)}`
        )
    }
  }
  return out
}

/** The first ```ts block of the package README (its Usage block). */
export const readmeUsage = (pkgDir: URL): DocExample | undefined => {
  const file = new URL("README.md", pkgDir)
  const text = readFileSync(file, "utf8")
  const m = /```(?:ts|typescript)\n([\s\S]*?)```/.exec(text)
  if (m === null) return undefined
  const line = text.slice(0, m.index).split("\n").length + 1
  return { name: "README.md Usage", location: where(file, line), code: m[1]!, file }
}

/**
 * Type errors of the examples, compiled with the repository's tsconfig.json as if each one were a
 * file next to the file it documents (so imports resolve to the package sources). `// => value`
 * comments are not type-checked.
 */
export const typecheckExamples = (examples: ReadonlyArray<DocExample>): Array<string> => {
  const root = fileURLToPath(repoRoot)
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config
  const options = { ...ts.parseJsonConfigFileContent(config, ts.sys, root).options, noEmit: true }
  const virtual = new Map<string, DocExample>()
  for (const [i, e] of examples.entries())
    virtual.set(join(dirname(fileURLToPath(e.file)), `__docExample${i}.ts`), e)
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists } = host
  host.fileExists = (f) => virtual.has(f) || fileExists(f)
  host.getSourceFile = (f, language, ...rest) => {
    const e = virtual.get(f)
    return e !== undefined
      ? ts.createSourceFile(f, `export {}\n${e.code}`, language)
      : getSourceFile(f, language, ...rest)
  }
  const program = ts.createProgram([...virtual.keys()], options, host)
  return [...virtual].flatMap(([f, e]) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(f)).map((d) => {
      const line =
        d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : 0
      return `${e.location} (line ${line} of the example): ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`
    })
  )
}

// ---------------------------------------------------------------------------------------------
// Running

/**
 * Modules an example may import, by specifier. Any other bare specifier (`node:*`, or a
 * dependency of the documented package such as the CLI's `commander`) is resolved as Node's ESM
 * loader would from the example's own file, so a package's own `node_modules` serves its examples.
 */
const loaders: Record<string, () => Promise<unknown>> = {
  "@loadledger/schema": () => import("@loadledger/schema"),
  "@loadledger/policies": () => import("@loadledger/policies"),
  "@loadledger/step-time": () => import("@loadledger/step-time"),
  "@loadledger/sim": () => import("@loadledger/sim"),
  "@loadledger/testing": () => import("@loadledger/testing"),
  "@loadledger/live": () => import("@loadledger/live"),
  "@loadledger/live/testing": () => import("@loadledger/live/testing"),
  "@loadledger/cli": () => import("@loadledger/cli"),
  effect: () => import("effect"),
  "fast-check": () => import("fast-check")
}

const load = (specifier: string, from: URL): Promise<unknown> => {
  const loader = loaders[specifier]
  if (loader !== undefined) return loader()
  if (/^@loadledger\/[^/]+\//.test(specifier))
    throw new Error(`examples import a package by its name (its public entry), not ${specifier}`)
  if (specifier.startsWith("."))
    return import(/* @vite-ignore */ fileURLToPath(new URL(specifier.replace(/\.js$/, ".ts"), from)))
  if (specifier.startsWith("node:")) return import(/* @vite-ignore */ specifier)
  return import(/* @vite-ignore */ resolveModule(specifier, from.href))
}

/** A trailing comment that is a bare literal (`// 3`, `// "x"`, `// [1, 2]`): an unchecked value. */
const looksLikeValue = (text: string): boolean =>
  /^(-?[\d_.]+(e[+-]?\d+)?n?|true|false|null|undefined|"[^"]*"|'[^']*'|\[.*\]|\{.*\})$/.test(text.trim())

const parses = (expr: string): boolean =>
  (ts.transpileModule(`(${expr}\n)`, { reportDiagnostics: true }).diagnostics ?? []).length === 0

/**
 * Rewrite an example: each `// => value` becomes a `__check(actual, value, label)` call; returns
 * TypeScript source and the module specifiers it imports.
 */
export const instrument = (code: string): { source: string; specifiers: Array<string>; checks: number } => {
  const sf = ts.createSourceFile("example.ts", code, ts.ScriptTarget.Latest, true)
  const lines = code.split("\n")
  const edits: Array<{ start: number; end: number; text: string }> = []
  const specifiers: Array<string> = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text)
    if (ts.isExpressionStatement(node) || ts.isVariableStatement(node)) {
      const trailing = ts.getTrailingCommentRanges(code, node.end) ?? []
      const endLine = sf.getLineAndCharacterOfPosition(node.end).line
      let arrowText = trailing.map((c) => code.slice(c.pos, c.end)).find((c) => /^\/\/\s*=>/.test(c))
      let line = endLine + 1
      if (arrowText === undefined && trailing.length === 0 && /^\s*\/\/\s*=>/.test(lines[line] ?? "")) {
        arrowText = lines[line]!.trim() // `// => value` alone on the line right below the statement
        line++
      }
      for (const c of trailing) {
        const text = code.slice(c.pos, c.end).replace(/^\/\/\s*/, "")
        if (arrowText === undefined && looksLikeValue(text))
          throw new Error(
            `line ${endLine + 1}: \`// ${text}\` looks like a value: write \`// => ${text}\` to check it`
          )
      }
      if (arrowText !== undefined) {
        let value = arrowText.replace(/^\/\/\s*=>\s*/, "")
        // continuation lines: comment-only lines right below, until the value parses
        while (!parses(value) && /^\s*\/\/(?!\s*=>)/.test(lines[line] ?? "")) {
          value += `\n${lines[line]!.replace(/^\s*\/\/ ?/, "")}`
          line++
        }
        if (!parses(value)) throw new Error(`unparsable checked value after // => : ${value}`)
        const startLine = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1
        const label = JSON.stringify(`line ${startLine}: ${node.getText().replace(/\s+/g, " ")}`)
        if (ts.isVariableStatement(node)) {
          const decls = node.declarationList.declarations
          if (decls.length !== 1 || !ts.isIdentifier(decls[0]!.name))
            throw new Error(`// => after a declaration needs exactly one plain name: ${node.getText()}`)
          edits.push({
            start: node.end,
            end: node.end,
            text: `; __check(${decls[0]!.name.text}, (${value}\n), ${label});`
          })
        } else {
          let actual = node.expression
          if (
            ts.isCallExpression(actual) &&
            actual.expression.getText() === "console.log" &&
            actual.arguments.length === 1
          )
            actual = actual.arguments[0]!
          edits.push({
            start: node.getStart(),
            end: node.end,
            text: `__check((${actual.getText()}), (${value}\n), ${label});`
          })
        }
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  let source = code
  for (const e of edits.sort((a, b) => b.start - a.start))
    source = source.slice(0, e.start) + e.text + source.slice(e.end)
  return { source, specifiers, checks: edits.length }
}

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  ...args: Array<string>
) => (...args: Array<unknown>) => Promise<void>

const closeNumbers = (a: unknown, b: unknown): boolean | undefined =>
  typeof a === "number" && typeof b === "number"
    ? Object.is(a, b) || a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))
    : undefined

/** Run one example; throws on any exception or failed check. Returns how many checks ran. */
export const runExample = async (example: DocExample): Promise<{ checks: number; logs: Array<string> }> => {
  const { source, specifiers } = instrument(example.code)
  const modules = new Map<string, unknown>()
  for (const s of new Set(specifiers)) modules.set(s, await load(s, example.file))
  const js = ts.transpileModule(source, {
    fileName: "example.ts",
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: false,
      verbatimModuleSyntax: false
    }
  }).outputText
  let checks = 0
  const logs: Array<string> = []
  const check = (actual: unknown, expected: unknown, label: string) => {
    checks++
    expect(actual, `${example.location} ${label}`).toEqual(expected)
  }
  const require = (s: string) => modules.get(s)
  const console = {
    ...globalThis.console,
    log: (...args: Array<unknown>) => logs.push(args.map(String).join(" "))
  }
  await new AsyncFunction("require", "exports", "__check", "console", js)(require, {}, check, console)
  return { checks, logs }
}

/** Every `.ts` source file of a package, `src/internal/` included. */
const allSourceFiles = (dir: URL): Array<URL> =>
  readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const url = new URL(entry, dir)
      if (statSync(url).isDirectory()) return allSourceFiles(new URL(`${entry}/`, dir))
      return entry.endsWith(".ts") && !entry.endsWith(".d.ts") ? [url] : []
    })

/**
 * The source files of a package (`src/**\/*.ts`, `internal/` included) that do not open with a
 * module docstring (a `/**` comment before the first statement), as repository-relative paths.
 */
export const filesWithoutModuleDoc = (pkgDir: URL): Array<string> =>
  allSourceFiles(new URL("src/", pkgDir))
    .filter(
      (file) =>
        !readFileSync(file, "utf8")
          .replace(/^#!.*\n/, "")
          .trimStart()
          .startsWith("/**")
    )
    .map((file) => relative(fileURLToPath(repoRoot), fileURLToPath(file)))

/**
 * The public value exports (`export const`, `function`, `class`, outside `src/internal/`) whose
 * docstring has no ```ts block under `@example`, as `path:line name`. Types and interfaces need a
 * docstring only: they have nothing to run.
 */
export const exportsWithoutExample = (pkgDir: URL): Array<string> => {
  const out: Array<string> = []
  for (const file of sourceFiles(new URL("src/", pkgDir))) {
    const text = readFileSync(file, "utf8")
    const sf = ts.createSourceFile(file.pathname, text, ts.ScriptTarget.Latest, true)
    for (const stmt of sf.statements) {
      const isValue =
        ts.isVariableStatement(stmt) || ts.isFunctionDeclaration(stmt) || ts.isClassDeclaration(stmt)
      if (!isValue || !isExported(stmt)) continue
      const comments = ts.getLeadingCommentRanges(text, stmt.pos) ?? []
      const doc = comments.filter((c) => text.startsWith("/**", c.pos)).at(-1)
      if (doc === undefined || exampleBlocks(text.slice(doc.pos, doc.end)).length === 0)
        out.push(
          `${where(file, sf.getLineAndCharacterOfPosition(stmt.getStart()).line + 1).replace(/:\d+$/, "")} ${declaredName(stmt)}`
        )
    }
  }
  return out
}

/**
 * The test suite of one package: every docstring example and the README Usage block run, each as
 * its own test; every export has a docstring, every public value export an example, every source
 * file a module docstring, and the examples type-check.
 */
export const describeDocExamples = (pkgDir: URL): void => {
  const pkg = JSON.parse(readFileSync(new URL("package.json", pkgDir), "utf8")) as { name: string }
  const examples = extractDocExamples(pkgDir)
  const readme = readmeUsage(pkgDir)
  expect.addEqualityTesters([closeNumbers])
  describe(`${pkg.name}: docstring examples (${examples.length})`, () => {
    for (const example of examples)
      it(example.name, async () => {
        await runExample(example)
      })
    it("every export has a docstring", () => {
      expect(undocumentedExports(pkgDir)).toEqual([])
    })
    it("every public value export has an @example", () => {
      expect(exportsWithoutExample(pkgDir)).toEqual([])
    })
    it("every source file opens with a module docstring", () => {
      expect(filesWithoutModuleDoc(pkgDir)).toEqual([])
    })
    it("the examples and the README Usage block type-check", () => {
      expect(typecheckExamples([...examples, ...(readme === undefined ? [] : [readme])])).toEqual([])
    })
  })
  describe(`${pkg.name}: README`, () => {
    it("README.md Usage block runs", async () => {
      expect(readme, "README.md has a ```ts Usage block").toBeDefined()
      await runExample(readme!)
    })
  })
}
