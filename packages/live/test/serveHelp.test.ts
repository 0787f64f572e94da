/**
 * `loadledger serve --help` describes every flag it takes (a newcomer found none described): each
 * flag of the parser's tables has one line of help with its default, and the usage text shows
 * every one of them, wrapped at 100 columns.
 */
import { describe, expect, it } from "vitest"
import { parseServeArgs, serveUsage } from "../src/index.js"
import { FLAG_HELP, optionLines, serveFlagNames } from "../src/internal/serveHelp.js"

describe("serve --help", () => {
  it("every flag the parser takes has a line of help, and no line names a flag it does not take", () => {
    expect(Object.keys(FLAG_HELP).sort()).toEqual([...serveFlagNames()].sort())
    for (const name of serveFlagNames()) expect(serveUsage).toMatch(new RegExp(`\\n  --${name}[ \\n]`))
  })

  it("each default is printed one way, whole on one line, and from the parser's own defaults", () => {
    const text = optionLines()
    expect(text).toContain("--port N ")
    expect(text.replace(/\s+/g, " ")).toContain("0 for any free one (default: 8000)")
    expect(text).toMatch(/\(default: 300000\)/)
    expect(text).toMatch(/\(default: this replica alone\)/)
    const parsed = parseServeArgs(["--worker", "http://127.0.0.1:1"])
    expect(
      typeof parsed === "object" && "port" in parsed && [parsed.port, parsed.drainMs, parsed.check]
    ).toEqual([8000, 30000, false])
    expect(text.replace(/\s+/g, " ")).toContain("may finish, in milliseconds (default: 30000)")
    for (const line of serveUsage.split("\n")) expect(line.length).toBeLessThanOrEqual(100)
  })

  it("--check is a flag without value, also from a config file", () => {
    const a = parseServeArgs(["--worker", "http://127.0.0.1:1", "--check"])
    expect(typeof a === "object" && "check" in a && a.check).toBe(true)
    const b = parseServeArgs([], {
      file: { name: "r.yaml", values: { workers: ["http://127.0.0.1:1"], check: true } }
    })
    expect(typeof b === "object" && "check" in b && b.check).toBe(true)
  })
})
