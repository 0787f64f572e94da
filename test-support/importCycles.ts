/**
 * Import circles across the source files of every package (`packages/<pkg>/src/**.ts`): the
 * check behind `importCycles.test.ts` (issue 29, "No circles").
 *
 * An edge is every module specifier a file names: `import`, `import type`, `export ... from`,
 * and `import("...")` (a lazy import still ties the two files together for a reader: neither
 * can be understood, moved or tested alone). Type-only imports count too: a type that two files
 * share belongs below both, in a leaf module. Specifiers are resolved as `tsc` resolves them,
 * with the repo's compiler options (the `@loadledger/source` condition), so an import of
 * `@loadledger/x` is an edge to `packages/x/src/index.ts`; files outside `packages/*\/src`
 * (dependencies, tests) are left out.
 *
 * Circles are the strongly connected components of that graph (Tarjan); each is reported with
 * its files and one shortest circle through them, e.g.
 * `live/src/Route.ts -> live/src/Router.ts -> live/src/Route.ts`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

/** One import circle: a strongly connected component of two or more files. */
export interface ImportCycle {
  /** Its files, relative to `packages/`, sorted. */
  readonly files: ReadonlyArray<string>
  /** One shortest circle through its first file, first file repeated at the end. */
  readonly path: ReadonlyArray<string>
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.isFile() && /\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")
      ? [full]
      : []
  })

/** The repo's compiler options, read from `tsconfig.base.json` at `repoRoot`. */
const compilerOptions = (repoRoot: string): ts.CompilerOptions => {
  const configPath = join(repoRoot, "tsconfig.base.json")
  const read = ts.readConfigFile(configPath, ts.sys.readFile)
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"))
  return ts.parseJsonConfigFileContent(read.config, ts.sys, repoRoot).options
}

/**
 * Every module specifier `file` names, from its syntax tree (`ts.preProcessFile`'s quick scanner
 * misreads some template literals and then takes an `@example`'s `import` in a comment for code).
 */
const moduleSpecifiers = (file: string): Array<string> => {
  const text = readFileSync(file, "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false)
  const found: Array<string> = []
  // Only a file that says `import(` anywhere can hold a lazy import or an import type deep in
  // its tree: the others are read statement by statement (about 3x faster).
  const deep = text.includes("import(")
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text)
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text)
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text)
    }
    if (deep) ts.forEachChild(node, visit)
  }
  for (const statement of source.statements) visit(statement)
  return found
}

/**
 * The import graph of `packages/*\/src` under `repoRoot`: each file (relative to `packages/`) to
 * the files it imports, resolved as `tsc` does.
 */
export const importGraph = (repoRoot: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const packagesDir = join(repoRoot, "packages")
  const files = readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const src = join(packagesDir, entry.name, "src")
      return ts.sys.directoryExists(src) ? sourceFiles(src) : []
    })
  const known = new Set(files)
  const options = compilerOptions(repoRoot)
  const host = ts.createCompilerHost(options)
  const cache = ts.createModuleResolutionCache(repoRoot, (name) => name, options)
  const graph = new Map<string, Array<string>>()
  for (const file of files) {
    const targets = new Set<string>()
    for (const specifier of moduleSpecifiers(file)) {
      const resolved = ts.resolveModuleName(specifier, file, options, host, cache).resolvedModule
      if (resolved !== undefined && known.has(resolved.resolvedFileName))
        targets.add(resolved.resolvedFileName)
    }
    graph.set(
      relative(packagesDir, file),
      [...targets].map((target) => relative(packagesDir, target))
    )
  }
  return graph
}

/** A shortest path of edges from `from` back to `from`, staying inside `within`. */
const shortestCircle = (
  graph: ReadonlyMap<string, ReadonlyArray<string>>,
  from: string,
  within: ReadonlySet<string>
): Array<string> => {
  const previous = new Map<string, string>()
  const queue: Array<string> = [from]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string
    for (const next of graph.get(node) ?? []) {
      if (!within.has(next)) continue
      if (next === from) {
        const path = [from]
        for (let at: string | undefined = node; at !== undefined && at !== from; at = previous.get(at)) {
          path.unshift(at)
        }
        path.unshift(from)
        return path
      }
      if (!previous.has(next)) {
        previous.set(next, node)
        queue.push(next)
      }
    }
  }
  return [from, from]
}

/**
 * The import circles of `graph`: its strongly connected components of two or more files (a file
 * importing itself counts too), each with one shortest circle, sorted by first file.
 */
export const importCycles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<ImportCycle> => {
  // Tarjan's strongly connected components, iterative (deep chains would overflow recursion).
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const components: Array<Array<string>> = []
  let counter = 0
  for (const root of graph.keys()) {
    if (index.has(root)) continue
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }]
    index.set(root, counter)
    low.set(root, counter++)
    stack.push(root)
    onStack.add(root)
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: number }
      const edges = graph.get(frame.node) ?? []
      if (frame.next < edges.length) {
        const next = edges[frame.next++] as string
        if (!index.has(next)) {
          index.set(next, counter)
          low.set(next, counter++)
          stack.push(next)
          onStack.add(next)
          work.push({ node: next, next: 0 })
        } else if (onStack.has(next)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(next) as number))
        }
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) {
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number))
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: Array<string> = []
        let member: string | undefined
        do {
          member = stack.pop() as string
          onStack.delete(member)
          component.push(member)
        } while (member !== frame.node)
        const selfLoop = component.length === 1 && (graph.get(frame.node) ?? []).includes(frame.node)
        if (component.length > 1 || selfLoop) components.push(component.sort())
      }
    }
  }
  return components
    .map((files) => ({ files, path: shortestCircle(graph, files[0] as string, new Set(files)) }))
    .sort((a, b) => ((a.files[0] as string) < (b.files[0] as string) ? -1 : 1))
}

/** `cycle` as one line per file, for a failing test's message. */
export const describeCycle = (cycle: ImportCycle): string =>
  `${cycle.files.length} files: ${cycle.path.join(" -> ")}${
    cycle.files.length > cycle.path.length - 1
      ? `\n    (also: ${cycle.files.filter((f) => !cycle.path.includes(f)).join(", ")})`
      : ""
  }`
