// The short soak: the whole fault matrix against an in-process router, in seconds (issue 12).
import { describe, expect, it } from "vitest"
import { defaultSoakOptions, runSoak, soakProblems } from "./soak.js"

describe("soak (short)", () => {
  it("8 engines x 2 ranks under the fault matrix: 0 lost, 0 duplicated, in-flight 0, every fault engine excluded", async () => {
    const report = await runSoak({
      ...defaultSoakOptions,
      requests: 300,
      concurrency: 16,
      router: "inprocess",
      engineLatencyMs: 20,
      faultStartMs: 800,
      faultMs: 2_000,
      deadlineMs: 45_000,
      oversizedBytes: 100_000,
      firstByteTimeoutMs: 1_500,
      idleTimeoutMs: 1_500
    })
    expect(report.sent).toBe(300)
    expect(report.lost).toBe(0)
    expect(report.duplicatedAtEngines).toBe(0)
    expect(report.inflightAtEnd).toBe(0)
    expect(report.engines.filter((e) => e.mustExclude).every((e) => e.excludedAfterMs !== undefined)).toBe(
      true
    )
    expect(report.engines.filter((e) => e.mustExclude).map((e) => e.fault)).toEqual([
      "hang",
      "500s",
      "restart (port closed)",
      "schema drift",
      "frozen stats",
      "-1 loads"
    ])
    // in-process, the engines and the client share the router's event loop, so the bounds get slack here;
    // `pnpm soak` runs the router in its own process and checks them exactly
    expect(
      soakProblems({
        ...report,
        engines: report.engines.map((e) => ({
          ...e,
          boundMs: (e.boundMs === undefined ? 0 : e.boundMs) + 1000,
          receivedAfterBound: 0
        }))
      })
    ).toEqual([])
  })
})
