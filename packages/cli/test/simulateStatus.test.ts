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

  it("every request finished: 'ok 100/100' at a rate the group keeps up with, exit 0", async () => {
    const code = await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--rate-scale",
      "0.1"
    )
    expect(row()).toContain("ok 100/100")
    expect(code).toBe(0)
  })

  it("every request finished but the backlog grew (the trace's own rate, above capacity): 'behind 100/100', exit 0", async () => {
    const code = await run("--trace", mooncake, "--policies", "round-robin", "--limit", "100")
    expect(row()).toContain("behind 100/100")
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

// The lockstep rules from the command line (issue 17, item 4): the same SimConfig fields the
// simulator tests pin, reachable by a user of `loadledger simulate`.
describe("simulate lockstep flags", () => {
  const stderr = () =>
    vi
      .mocked(process.stderr.write)
      .mock.calls.map((c) => String(c[0]))
      .join("")

  it("--no-dummy-batches: a rank that can never admit its request vetoes every forward -> NoProgress naming the ranks, exit 3", async () => {
    const code = await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--kv-pool-tokens",
      "20000",
      "--max-request-tokens",
      "400000",
      "--no-dummy-batches",
      "--quiet"
    )
    expect(row()).toContain("NoProgress 0/100, 100 stalled")
    expect(stderr()).toContain("rank 6: request 6 needs 23141 tokens of KV")
    expect(stderr()).toContain("without dummy batches the forward of ranks 0,1,2,3,4,5 waits")
    expect(code).toBe(3)
  })

  it("dummy batches on (the default): the other ranks run until the stall bound, 1 request finishes", async () => {
    const code = await run(
      "--trace",
      mooncake,
      "--policies",
      "round-robin",
      "--limit",
      "100",
      "--kv-pool-tokens",
      "20000",
      "--max-request-tokens",
      "400000",
      "--quiet"
    )
    expect(row()).toContain("NoProgress 1/100, 2 stalled, 97 unfinished")
    expect(stderr()).toContain("an empty batch in 16 consecutive step attempts")
    expect(code).toBe(3)
  })

  it("--prefill-interval 4 on vLLM defers prefills: every request still finishes, TTFT p50 rises", async () => {
    const ttftP50 = async (...extra: Array<string>) => {
      out = ""
      const code = await run(
        "--trace",
        mooncake,
        "--policies",
        "total-tokens",
        "--limit",
        "300",
        "--engine",
        "vllm",
        "--json",
        ...extra
      )
      expect(code).toBe(0)
      const r = JSON.parse(out).results[0]
      expect(r.requests.finished).toBe(300)
      return r.ttftSeconds.p50 as number
    }
    const every = await ttftP50()
    const fourth = await ttftP50("--prefill-interval", "4")
    expect(fourth).toBeGreaterThan(every * 1.5)
  })

  it("--prefill-interval 0 and --stall-steps 0 are rejected before any work: one line, exit 1", async () => {
    for (const flag of ["--prefill-interval", "--stall-steps"]) {
      vi.mocked(process.stderr.write).mockClear()
      const code = await run("--trace", "missing.jsonl", "--policies", "total-tokens", flag, "0")
      expect(code).toBe(1)
      expect(stderr()).toContain(`${flag} must be a positive integer, got "0"`)
      expect(stderr()).not.toContain("trace file not found")
    }
  })
})
