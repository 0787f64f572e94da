// What the subprocess tests share: the built `loadledger` (needs `pnpm build`, as the startup and
// report tests do), a shell in which `loadledger` is that executable, run in a scratch folder that
// sees the repository's examples/ and fixtures/ (so the help examples run as printed).
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The built executable. */
export const bin = new URL("../dist/bin.js", import.meta.url).pathname
/** Whether it is built (the subprocess tests skip otherwise). */
export const built = existsSync(bin)
const repo = new URL("../../../", import.meta.url).pathname

/** `node dist/bin.js ...args` from the repository root. */
export const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  spawnSync("node", [bin, ...args], {
    cwd: repo,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env }
  })

/**
 * A scratch folder with `examples` and `fixtures` linked from the repository, a `loadledger` on
 * PATH and a HOME holding the completion folders; `sh(line)` runs one command line there in bash.
 */
export const scratchShell = () => {
  const dir = mkdtempSync(join(tmpdir(), "ll-sh-"))
  for (const d of ["examples", "fixtures"]) symlinkSync(join(repo, d), join(dir, d))
  const binDir = join(dir, ".bin")
  mkdirSync(binDir)
  const shim = join(binDir, "loadledger")
  writeFileSync(shim, `#!/bin/sh\nexec node ${bin} "$@"\n`)
  chmodSync(shim, 0o755)
  const home = join(dir, ".home")
  for (const d of [".zfunc", ".config/fish/completions"]) mkdirSync(join(home, d), { recursive: true })
  const sh = (line: string) =>
    spawnSync("bash", ["-c", line], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH}`, HOME: home }
    })
  return { dir, home, sh }
}
