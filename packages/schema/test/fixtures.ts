import { readFileSync } from "node:fs"

/** Read a file of the repository's `fixtures/` folder. */
export const fixture = (path: string): string =>
  readFileSync(new URL(`../../../fixtures/${path}`, import.meta.url), "utf8")

/** A Result's success value, or a test failure naming the error. */
export const ok = <A>(r: { _tag: "Success"; success: A } | { _tag: "Failure"; failure: unknown }): A => {
  if (r._tag === "Failure") throw new Error(`expected success, got ${JSON.stringify(r.failure)}`)
  return r.success
}

/** A Result's failure value, or a test failure. */
export const err = <E>(r: { _tag: "Success"; success: unknown } | { _tag: "Failure"; failure: E }): E => {
  if (r._tag === "Success") throw new Error(`expected a failure, got ${JSON.stringify(r.success)}`)
  return r.failure
}
