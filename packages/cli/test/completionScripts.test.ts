// Issue 36 item 6: the completion scripts, as `loadledger completion SHELL` prints them (a
// subprocess of the built CLI), name every command and every flag of every command; the list of
// what they must name comes from the commander definitions themselves (`fullProgram`).
import type { Command } from "commander"
import { describe, expect, it } from "vitest"
import { fullProgram } from "../src/index.js"
import { built, run } from "./cliSubprocess.js"

/** Every command and subcommand as its path (`["sweep", "run"]`), with its visible long flags. */
const walk = (c: Command, path: ReadonlyArray<string> = []): Array<{ path: string[]; flags: string[] }> =>
  c.commands.flatMap((s) => {
    const p = [...path, s.name()]
    const flags = s.options
      .filter((o) => !(o as { hidden?: boolean }).hidden && o.long !== undefined)
      .map((o) => o.long!)
    return [{ path: p, flags: [...flags, "--help"] }, ...walk(s, p)]
  })

/** The text between `start` and the first `end` after it ("" when `start` is absent). */
const between = (text: string, start: string, end: string): string => {
  const i = text.indexOf(start)
  if (i < 0) return ""
  const j = text.indexOf(end, i + start.length)
  return text.slice(i, j < 0 ? undefined : j)
}

describe.skipIf(!built)("completion scripts name every command and every flag", async () => {
  const commands = walk(await fullProgram())

  it("the definitions hold what the scripts must name (a sanity floor: the list is not empty)", () => {
    expect(commands.map((c) => c.path.join(" "))).toEqual(
      expect.arrayContaining([
        "simulate",
        "capacity",
        "goodput",
        "compare",
        "sweep run",
        "sweep merge",
        "list"
      ])
    )
    expect(commands.find((c) => c.path.join(" ") === "capacity")!.flags).toContain("--tp")
  })

  for (const shell of ["bash", "zsh", "fish"] as const)
    it(`${shell}: every command's block lists each of its flags`, () => {
      const r = run(["completion", shell])
      expect(r.status).toBe(0)
      const script = r.stdout
      const missing: Array<string> = []
      for (const { path, flags } of commands) {
        const block =
          shell === "bash"
            ? between(script, `    '${path.join(" ")}')`, '-- "$cur")) ;;')
            : shell === "zsh"
              ? between(script, `_loadledger_${path.join("_").replace(/-/g, "_")}() {`, "\n}")
              : script
                  .split("\n")
                  .filter((l) => l.includes(`__fish_seen_subcommand_from ${path.at(-1)}'`))
                  .join("\n")
        if (block === "") missing.push(`${path.join(" ")} (no block)`)
        for (const f of flags) {
          const named =
            shell === "bash"
              ? new RegExp(`[' ]${f}[' ]`).test(block)
              : shell === "zsh"
                ? block.includes(`'${f}[`)
                : new RegExp(` -l ${f.slice(2)}( |$)`, "m").test(block)
          if (!named) missing.push(`${path.join(" ")} ${f}`)
        }
      }
      expect(missing).toEqual([])
      // and every top-level command is offered at the root
      for (const { path } of commands.filter((c) => c.path.length === 1)) expect(script).toContain(path[0])
    })
})
