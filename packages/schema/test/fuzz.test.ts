/**
 * The fuzz suite (`pnpm fuzz`, 1,000,000 inputs; figures in the README) at a small count, so CI
 * runs it on every change: all four counters must be 0.
 */
import { describe, expect, it } from "vitest"
import { fuzzTargets, runFuzz } from "./fuzz/run.js"

describe("fuzz suite (small count)", () => {
  it("every public decoder: no throw, no hang, no accepted negative, no leaked key", () => {
    const r = runFuzz({ count: 3_000, seed: 20261201, hangMs: 1_000 })
    expect(fuzzTargets.length).toBeGreaterThanOrEqual(25)
    expect({
      throws: r.throws,
      hangs: r.hangs,
      acceptedNegatives: r.acceptedNegatives,
      leakedKeys: r.leakedKeys
    }).toEqual({
      throws: 0,
      hangs: 0,
      acceptedNegatives: 0,
      leakedKeys: 0
    })
  })
})
