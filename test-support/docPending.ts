/**
 * What the docstring checks of `docExamples.ts` still let pass, by name: public value exports with
 * no `@example` and source files with no module docstring. Each list may only shrink (a listed
 * item that is fixed fails the check until it is taken off), so nothing new joins them.
 *
 * Why they are here (issue 15, "an executed `@example` for every public export"): the own and
 * peer policies, the simulator, the step-time model and the testing kit were being changed by
 * other contributors when the checks came in; the CLI's command modules are internal to the `loadledger`
 * command (only `program` / `main` are its API) and still wait for their examples (a `register`
 * example needs `commander`, which the example runner in `test-support/` does not resolve).
 *
 * @since 0.1.0
 */

/** `path name` of value exports without an `@example` (as `exportsWithoutExample` lists them). */
export const pendingExamples: ReadonlyArray<string> = ["packages/step-time/src/index.ts version"]

/** Repository-relative paths of source files without a module docstring. */
export const pendingModuleDocs: ReadonlyArray<string> = [
  "packages/policies/src/own/CacheAffinity.ts",
  "packages/policies/src/own/Entries.ts",
  "packages/policies/src/own/LedgerBalanced.ts"
]
