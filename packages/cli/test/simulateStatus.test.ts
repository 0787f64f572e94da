// The status column and exit code of `loadledger simulate` (issue 17, item 6): `ok` only when every
// request finished; otherwise the rejected / stalled / unfinished counts and a non-zero exit code.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { simulateExitCode, statusLabel } from "../src/commands/simulateTable.js"
import { main } from "../src/index.js"

const mooncake = new URL("../../../examples/traces/mooncake/conversation_trace.jsonl", import.meta.url)
  .pathname

let out = ""
beforeEach(() => {
  out = ""
  process.exitCode = undefined
  vi.spyOn(process.stdout, "write").mockImplementation((s: string | Uint8Array) => {
    out += String(s)
    return true
  })
  vi.spyOn(process.stderr, "write").mockImplementation(() => true)
})
afterEach(() => {
  vi.restoreAllMocks()
  process.exitCode = undefined
})

const run = (...args: Array<string>) => main(["node", "loadledger", "simulate", ...args])
const row = () => out.split("\n").find((l) => l.includes("round-robin"))!

describe("simulate status column and exit code", () => {
  it("--kv-pool-tokens 10: every request rejected -> 'incomplete 0/100, 100 rejected', exit 2 (was 'ok 0/100', exit 0)", async () => {
    const code = await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--kv-pool-tokens",
      "10"
    )
    expect(row()).toContain("incomplete 0/100, 100 rejected")
    expect(row()).not.toContain("ok ")
    expect(code).toBe(2)
  })

  it("--kv-pool-tokens 20000: the 24 of the first 100 requests longer than the pool are rejected and named", async () => {
    const code = await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--kv-pool-tokens",
      "20000"
    )
    expect(row()).toContain("incomplete 76/100, 24 rejected")
    expect(code).toBe(2)
    out = ""
    await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--kv-pool-tokens",
      "20000",
      "--json"
    )
    expect(JSON.parse(out).results[0].requests).toEqual({
      total: 100,
      finished: 76,
      unfinished: 24,
      rejected: 24,
      stalled: 0
    })
  })

  it("every request finished: 'ok 100/100', exit 0", async () => {
    const code = await run("--trace", mooncake, "--policies", "round-robin", "--limit", "100")
    expect(row()).toContain("ok 100/100")
    expect(code).toBe(0)
  })

  it("statusLabel names stalled and unfinished apart from rejected; simulateExitCode takes the worst run", () => {
    const stuck = {
      status: { _tag: "NoProgress", atSeconds: 3, ranks: [1], message: "" },
      requests: { total: 10, finished: 4, unfinished: 6, rejected: 1, stalled: 2 }
    } as const
    expect(statusLabel(stuck)).toBe("NoProgress 4/10, 1 rejected, 2 stalled, 3 unfinished")
    const cut = {
      status: { _tag: "TimeLimit", atSeconds: 3 },
      requests: { total: 10, finished: 10, unfinished: 0, rejected: 0, stalled: 0 }
    } as const
    // a time limit that left nothing unfinished is still not `ok`: the run did not complete
    expect(statusLabel(cut)).toBe("TimeLimit 10/10")
    const ok = { status: { _tag: "Completed" }, requests: cut.requests } as const
    expect(simulateExitCode([ok])).toBe(0)
    expect(simulateExitCode([ok, cut])).toBe(2)
    expect(simulateExitCode([cut, stuck, ok])).toBe(3)
  })
})
