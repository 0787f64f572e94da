import { defineConfig, type Options } from "tsup"

/**
 * The one build every published package uses: ESM only (effect 4 is ESM-only), d.ts, source maps,
 * Node 20 target, compiled with the base tsconfig (no `composite`, see TOOLCHAIN pitfall 2).
 */
export const packageBuild = (entry: ReadonlyArray<string> = ["src/index.ts"], extra: Options = {}) =>
  defineConfig({
    entry: [...entry],
    format: ["esm"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "node20",
    tsconfig: "../../tsconfig.build.json",
    ...extra
  })
