// The built CLI as a user runs it, in a subprocess: lazy command loading, --version, unknown
// commands, a closed stdout. Needs `pnpm build` first (as the report and pack tests do).
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const bin = new URL("../dist/bin.js", import.meta.url).pathname
const run = (args: ReadonlyArray<string>) => spawnSync("node", [bin, ...args], { encoding: "utf8" })

describe.skipIf(!existsSync(bin))("built loadledger in a subprocess", () => {
  it("--version names loadledger and each package's version", () => {
    const r = run(["--version"])
    expect(r.status).toBe(0)
    expect(r.stdout.split("\n")[0]).toBe("loadledger 0.1.0")
    for (const p of ["cli", "schema", "sim", "policies", "step-time", "live"])
      expect(r.stdout).toContain(`@loadledger/${p} 0.1.0`)
  })
  it("--version and --help load no effect, simulator or policy module; --version not even commander", () => {
    for (const flag of ["--version", "-V", "--help"]) {
      const r = spawnSync("node", [bin, flag], {
        encoding: "utf8",
        env: { ...process.env, NODE_DEBUG: "esm" }
      })
      expect(r.status).toBe(0)
      // NODE_DEBUG=esm logs every module the loader resolves on stderr
      const loaded = r.stderr
      if (flag === "--help") expect(loaded).toMatch(/commander/)
      else expect(loaded).not.toMatch(/commander/)
      expect(loaded).not.toMatch(/node_modules\/effect\//)
      expect(loaded).not.toMatch(/packages\/sim\//)
      expect(loaded).not.toMatch(/simulate-[A-Z0-9]+\.js/)
    }
  })
  it("the executable's --version and -V print what main's --version prints", async () => {
    const { main } = await import("../src/index.js")
    let printed = ""
    const write = process.stdout.write
    process.stdout.write = ((c: string | Uint8Array) => {
      printed += String(c)
      return true
    }) as typeof process.stdout.write
    try {
      expect(await main(["node", "loadledger", "--version"])).toBe(0)
    } finally {
      process.stdout.write = write
    }
    expect(printed.split("\n")[0]).toBe("loadledger 0.1.0")
    expect(run(["--version"]).stdout).toBe(printed)
    expect(run(["-V"]).stdout).toBe(printed)
  })
  const traceFile = new URL("../../../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url)
    .pathname
  // every module a short one-policy replay loads, ESM and CommonJS (NODE_DEBUG logs them on stderr)
  const replayLoads = () => {
    const r = spawnSync(
      "node",
      [bin, "simulate", "--trace", traceFile, "--policies", "total-tokens", "--limit", "20"],
      { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NODE_DEBUG: "esm,module" } }
    )
    expect(r.status).toBe(0)
    return r.stderr
  }
  it("a one-policy replay loads effect by module (not its barrel); the hash addon only for the token ids it synthesises", () => {
    const loaded = replayLoads()
    expect(loaded).toMatch(/effect\/dist\/HashMap\.js/)
    expect(loaded).not.toMatch(/effect\/dist\/index\.js/)
    // the simulator synthesises every routed request's token ids (issue 27: every policy routes every
    // trace) by hashing its block hashes or request id: a replay loads the addon, at its first route
    expect(loaded).toMatch(/@node-rs\+xxhash|@node-rs\/xxhash/)
    expect(loaded).toMatch(/step-time\/dist\/core\.js/)
  })
  // Fails until sim/src/internal/rank.ts (the simulator internals, rewritten elsewhere) imports
  // `extendKvReadTokens` from "@loadledger/step-time/core": its one import of the full entry loads
  // effect's Schema (143 modules) and ml-matrix, about 300 ms of a 1,000-request replay here.
  it.fails("a one-policy replay loads no decoder: no effect Schema, no ml-matrix", () => {
    const loaded = replayLoads()
    expect(loaded).not.toMatch(/effect\/dist\/Schema\.js/)
    expect(loaded).not.toMatch(/ml-matrix/)
  })
  it("an unknown command fails with did-you-mean, even with --help", () => {
    const typo = run(["simulte"])
    expect(typo.status).toBe(1)
    expect(typo.stderr).toBe(
      "loadledger: unknown command 'simulte' (did you mean 'simulate'?); see loadledger --help\n"
    )
    const help = run(["nosuchcommand", "--help"])
    expect(help.status).toBe(1)
    expect(help.stdout).toBe("")
    expect(help.stderr).toContain("unknown command 'nosuchcommand'")
  })
  it("a subcommand's help piped into head ends with status 0 and no stack trace", () => {
    const r = spawnSync("sh", ["-c", `node ${bin} simulate --help | head -1`], { encoding: "utf8" })
    expect(r.stdout).toBe("Usage: loadledger simulate [options]\n")
    expect(r.stderr).not.toContain("EPIPE")
    const status = spawnSync("bash", [
      "-c",
      `set -o pipefail; node ${bin} simulate --help | head -c 10 >/dev/null`
    ])
    expect(status.status).toBe(0)
  })
  it("the rank bound (4096) is checked before any work: no table, no report written", () => {
    const trace = new URL("../../../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url)
      .pathname
    const report = join(mkdtempSync(join(tmpdir(), "ll-dp-")), "r.html")
    for (const cmd of [
      ["simulate", "--policies", "total-tokens", "--report", report],
      ["capacity", "--policy", "total-tokens"]
    ]) {
      const r = run([...cmd, "--trace", trace, "--dp", "100000"])
      expect(r.status).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(
        'loadledger: --dp must be an integer from 1 to 4096 (the simulator\'s rank bound), got "100000"\n'
      )
    }
    expect(existsSync(report)).toBe(false)
  })
})
