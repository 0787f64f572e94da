// Issue 33 item 3: `simulate --slow-rank 1:0.5 --policy speed-aware` routes around the slow rank.
import { describe, expect, it } from "vitest"
import { runCaptured } from "./runCli.js"

const azure = new URL("../../../fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv", import.meta.url)
  .pathname

describe("speed-aware on a slow rank", () => {
  it("gives the slow rank fewer requests than round-robin does, and none of the healthy ranks fewer", async () => {
    const r = await runCaptured(
      "simulate",
      "--trace",
      azure,
      "--limit",
      "600",
      "--policies",
      "round-robin,speed-aware",
      "--dp",
      "4",
      "--slow-rank",
      "1:0.5",
      "--json",
      "--quiet"
    )
    const [rr, speed] = JSON.parse(r.out).results
    expect(rr.policy).toBe("round-robin")
    expect(speed.policy).toBe("speed-aware")
    expect(speed.status._tag).toBe("Completed")
    expect(rr.requestsPerRank).toEqual([150, 150, 150, 150])
    // the slow rank takes at most half its round-robin share; the others take the rest
    expect(speed.requestsPerRank[1]).toBeLessThan(75)
    for (const k of [0, 2, 3]) expect(speed.requestsPerRank[k]).toBeGreaterThan(150)
  })
})
