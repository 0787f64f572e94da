import { describe, expect, it } from "vitest"
import { mooncake, runCaptured } from "./runCli.js"

// The Mooncake trace's long prompts cannot meet a 10 ms TTFT at any rate, not even on the balance
// bound: the board must say so (and how to loosen it) instead of naming a "best" of all zeros.
describe("loadledger goodput, an SLO met at no rate", () => {
  it("says the SLO is met at no rate, even by the bound, and names no best", async () => {
    const { code, out } = await runCaptured(
      "goodput",
      "--trace",
      mooncake,
      "--limit",
      "120",
      "--windows",
      "2",
      "--dp",
      "2",
      "--slo",
      "ttft=10ms,tpot=100ms",
      "--precision",
      "0.25",
      "--no-curves",
      "--jobs",
      "1",
      "--policies",
      "round-robin,total-tokens"
    )
    expect(code).toBe(0)
    expect(out).toContain(
      "sglang engine: the SLO is met at no rate on any window, not even by the balance bound (the ceiling), so no policy can be ranked: loosen it"
    )
    expect(out).not.toContain("sglang engine: best ")
  })
})
