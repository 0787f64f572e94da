/**
 * How the bench cells load the packages: `@loadledger/<pkg>` (this build), or, with
 * `BENCH_SIM_BASE=<checkout>`, the built `dist/index.js` of another checkout (the base columns).
 *
 * @since 0.5.0
 */
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const base = process.env.BENCH_SIM_BASE

/** Import package `pkg` of this build or of `BENCH_SIM_BASE`'s. */
export const load = (pkg) =>
  base
    ? import(pathToFileURL(join(base, "packages", pkg, "dist", "index.js")).href)
    : import(`@loadledger/${pkg}`)
