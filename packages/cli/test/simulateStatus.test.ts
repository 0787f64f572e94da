// The status column and exit code of `loadledger simulate` (issue 17, item 6): `ok` only when every
// request finished; otherwise the rejected / stalled / unfinished counts and a non-zero exit code.
import { describe, expect, it } from "vitest"
import { simulateExitCode, statusLabel } from "../src/commands/simulateTable.js"
import { captureOutput } from "./captureOutput.js"
import { loadledger, simulateMooncake } from "./runCli.js"

const io = captureOutput()

const row = () => io.out.split("\n").find((l) => l.includes("round-robin"))!
// round-robin over the first 100 Mooncake requests, then the flags under test
const roundRobin100 = (...extra: Array<string>) => simulateMooncake("round-robin", 100, ...extra)

describe("simulate status column and exit code", () => {
  const statusCases = [
    {
      name: "--kv-pool-tokens 10: every request rejected -> 'incomplete 0/100, 100 rejected', exit 2 (was 'ok 0/100', exit 0)",
      extra: ["--kv-pool-tokens", "10"],
      status: "incomplete 0/100, 100 rejected",
      notStatus: "ok ",
      code: 2
    },
    {
      name: "every request finished: 'ok 100/100' at a rate the group keeps up with, exit 0",
      extra: ["--rate-scale", "0.1"],
      status: "ok 100/100",
      code: 0
    },
    {
      name: "every request finished but the backlog grew (the trace's own rate, above capacity): 'behind 100/100', exit 0",
      extra: [],
      status: "behind 100/100",
      code: 0
    }
  ]
  for (const { name, extra, status, notStatus, code } of statusCases)
    it(name, async () => {
      expect(await roundRobin100(...extra)).toBe(code)
      expect(row()).toContain(status)
      if (notStatus !== undefined) expect(row()).not.toContain(notStatus)
    })

  it("--json carries the table's status cell: outcome and keptUp ('behind' was only in the table)", async () => {
    const run = async (...extra: Array<string>) => {
      io.out = ""
      await roundRobin100(...extra, "--quiet")
      const cell = row().split("│").at(-2)!.trim()
      io.out = ""
      await roundRobin100(...extra, "--quiet", "--json")
      const r = JSON.parse(io.out).results[0]
      return { cell, status: r.status, keptUp: r.keptUp, outcome: r.outcome }
    }
    // the trace's own rate: every request finished, but the backlog grew
    expect(await run()).toEqual({
      cell: "behind 100/100",
      status: { _tag: "Completed" },
      keptUp: false,
      outcome: "behind 100/100"
    })
    expect(await run("--rate-scale", "0.1")).toEqual({
      cell: "ok 100/100",
      status: { _tag: "Completed" },
      keptUp: true,
      outcome: "ok 100/100"
    })
    // rejected requests: did not keep up
    expect(await run("--kv-pool-tokens", "20000")).toEqual({
      cell: "incomplete 76/100, 24 rejected",
      status: { _tag: "Completed" },
      keptUp: false,
      outcome: "incomplete 76/100, 24 rejected"
    })
    // fewer than 100 requests: keptUp cannot tell, and is absent from the JSON
    io.out = ""
    await simulateMooncake("round-robin", 50, "--quiet", "--json")
    const few = JSON.parse(io.out).results[0]
    expect("keptUp" in few).toBe(false)
    expect(few.outcome).toBe("ok 50/50")
  })

  it("--kv-pool-tokens 20000: the 24 of the first 100 requests longer than the pool are rejected and named", async () => {
    const code = await roundRobin100("--kv-pool-tokens", "20000")
    expect(row()).toContain("incomplete 76/100, 24 rejected")
    expect(code).toBe(2)
    io.out = ""
    await roundRobin100("--kv-pool-tokens", "20000", "--json")
    expect(JSON.parse(io.out).results[0].requests).toEqual({
      total: 100,
      finished: 76,
      unfinished: 24,
      rejected: 24,
      stalled: 0
    })
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
  // a pool of 20,000 tokens and requests up to 400,000: request 6 (23,141 tokens) can never be admitted
  const unadmittable = (...extra: Array<string>) =>
    roundRobin100("--kv-pool-tokens", "20000", "--max-request-tokens", "400000", "--quiet", ...extra)

  it("--no-dummy-batches: a rank that can never admit its request vetoes every forward -> NoProgress naming the ranks, exit 3", async () => {
    const code = await unadmittable("--no-dummy-batches")
    expect(row()).toContain("NoProgress 0/100, 100 stalled")
    expect(io.err).toContain("rank 6: request 6 needs 23141 tokens of KV")
    expect(io.err).toContain("without dummy batches the forward of ranks 0,1,2,3,4,5 waits")
    expect(code).toBe(3)
  })

  it("dummy batches on (the default): the other ranks run until the stall bound, 1 request finishes", async () => {
    const code = await unadmittable()
    expect(row()).toContain("NoProgress 1/100, 2 stalled, 97 unfinished")
    expect(io.err).toContain("an empty batch in 16 consecutive step attempts")
    expect(code).toBe(3)
  })

  it("--prefill-interval 4 on vLLM defers prefills: every request still finishes, TTFT p50 rises", async () => {
    const ttftP50 = async (...extra: Array<string>) => {
      io.out = ""
      const code = await simulateMooncake("total-tokens", 300, "--engine", "vllm", "--json", ...extra)
      expect(code).toBe(0)
      const r = JSON.parse(io.out).results[0]
      expect(r.requests.finished).toBe(300)
      return r.ttftSeconds.p50 as number
    }
    const every = await ttftP50()
    const fourth = await ttftP50("--prefill-interval", "4")
    expect(fourth).toBeGreaterThan(every * 1.5)
  })

  it("--prefill-interval 0 and --stall-steps 0 are rejected before any work: one line, exit 1", async () => {
    for (const flag of ["--prefill-interval", "--stall-steps"]) {
      io.err = ""
      const code = await loadledger(
        "simulate",
        "--trace",
        "missing.jsonl",
        "--policies",
        "total-tokens",
        flag,
        "0"
      )
      expect(code).toBe(1)
      expect(io.err).toContain(`${flag} must be a positive integer, got "0"`)
      expect(io.err).not.toContain("trace file not found")
    }
  })
})
