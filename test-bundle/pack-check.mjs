// Install check of what would be published: `pnpm pack` every package (pnpm rewrites `workspace:*`
// to real versions), install the tarballs with npm into a scratch project outside the workspace,
// then run an ESM consumer, a CommonJS (`require`) consumer, the installed `loadledger` bin, and a
// type-check of a TypeScript consumer under `moduleResolution` `node16` and `bundler`.
// Run by `pnpm pack:check` (part of `pnpm check`), after `pnpm build`.

import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const dir = mkdtempSync(join(tmpdir(), "loadledger-pack-"))
const tarballs = join(dir, "tarballs")
const app = join(dir, "app")
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

try {
  run("pnpm", ["-r", "--filter", "./packages/*", "pack", "--pack-destination", tarballs], root)
  const tgz = readdirSync(tarballs).filter((f) => f.endsWith(".tgz"))
  if (tgz.length !== 7) throw new Error(`expected 7 tarballs, got ${tgz.join(", ")}`)
  for (const f of tgz) {
    const manifest = run("tar", ["xzf", join(tarballs, f), "-O", "package/package.json"], dir)
    if (manifest.includes("workspace:")) throw new Error(`${f}: package.json still has a workspace: range`)
  }
  execFileSync("mkdir", ["-p", app])
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" })
  )
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--loglevel=error",
      ...tgz.map((f) => join(tarballs, f)),
      "fast-check@4.11.0",
      "typescript@5.9.3",
      "@types/node@20.19.43"
    ],
    app
  )

  const payload = JSON.stringify({
    timestamp: "2026-12-01T00:00:00Z",
    dp_rank_count: 2,
    loads: [0, 1].map((r) => ({
      dp_rank: r,
      num_running_reqs: 1,
      num_waiting_reqs: 0,
      num_total_tokens: r === 0 ? 300 : 10
    }))
  })
  const use = (imports) => `${imports}
const rows = decodeLedger(${JSON.stringify(payload)})
if (rows._tag !== "Success") throw new Error("decode failed")
const p = totalTokens
const s = p.observe(p.init(2), rows.success, 1)
const r = p.route(s, { requestId: "a", inputLength: 5 }, 1)
if (r._tag !== "Routed" || r.rank !== 1) throw new Error("unexpected route " + JSON.stringify(r))
if (typeof simulate !== "function" || typeof stepTime !== "function") throw new Error("missing exports")
console.log("routed to", r.rank)
`
  writeFileSync(
    join(app, "esm.mjs"),
    use(`import { decodeLedger } from "@loadledger/schema"
import { totalTokens } from "@loadledger/policies"
import { simulate } from "@loadledger/sim"
import { stepTime } from "@loadledger/step-time"
import "@loadledger/testing"
import "@loadledger/live"`)
  )
  writeFileSync(
    join(app, "cjs.cjs"),
    use(`const { decodeLedger } = require("@loadledger/schema")
const { totalTokens } = require("@loadledger/policies")
const { simulate } = require("@loadledger/sim")
const { stepTime } = require("@loadledger/step-time")
require("@loadledger/testing")
require("@loadledger/live")`)
  )
  for (const f of ["esm.mjs", "cjs.cjs"]) {
    const out = run(process.execPath, ["--no-warnings", f], app)
    if (!out.includes("routed to 1")) throw new Error(`${f}: ${out}`)
  }
  const bin = run(join(app, "node_modules", ".bin", "loadledger"), ["--help"], app)
  if (!bin.includes("simulate")) throw new Error(`loadledger --help: ${bin}`)

  writeFileSync(
    join(app, "consumer.ts"),
    `import { decodeLedger, type RankLoad } from "@loadledger/schema"
import { totalTokens, type Policy } from "@loadledger/policies"
import { simulate } from "@loadledger/sim"
import { stepTime } from "@loadledger/step-time"
import { policyLaws } from "@loadledger/testing"
import * as live from "@loadledger/live"
const rows = decodeLedger("{}")
const p: Policy<unknown> = totalTokens as Policy<unknown>
const loads: ReadonlyArray<RankLoad> = rows._tag === "Success" ? rows.success : []
export const s = p.observe(p.init(2), loads, 0)
export const used = [simulate, stepTime, policyLaws, live]
`
  )
  for (const resolution of ["node16", "bundler"]) {
    const module = resolution === "node16" ? "node16" : "esnext"
    writeFileSync(
      join(app, `tsconfig.${resolution}.json`),
      JSON.stringify({
        compilerOptions: {
          module,
          moduleResolution: resolution,
          target: "es2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"]
        },
        files: ["consumer.ts"]
      })
    )
    run(join(app, "node_modules", ".bin", "tsc"), ["-p", `tsconfig.${resolution}.json`], app)
  }
  console.log(
    `pack check: ${tgz.length} tarballs installed with npm; ESM, CommonJS, bin, tsc node16 + bundler ok`
  )
} catch (e) {
  const err = /** @type {{ stdout?: string, stderr?: string, message: string }} */ (e)
  console.error(`pack check failed: ${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`)
  process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
