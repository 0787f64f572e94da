import { expect, it } from "vitest"
import { hitRates, multiTurnTrace } from "./issue-52463.js"

it("the replay is built for 81.8% prefix reuse with ~34k-token prompts", () => {
  const t = multiTurnTrace({ sessions: 4, turns: 10, gapSeconds: 20, seed: 52463 })
  const total = t.reduce((a, r) => a + r.inputLength, 0)
  const reused = t.reduce((a, r) => a + (r.inputLength - 6144), 0)
  expect(t.length).toBe(40)
  expect(total / t.length).toBe(33792)
  expect(reused / total).toBeCloseTo(9 / 11, 10)
  for (let i = 1; i < t.length; i++) expect(t[i]!.arrivalSeconds).toBeGreaterThan(t[i - 1]!.arrivalSeconds)
})

it("rotation loses the hits the fixed start had, and prefix affinity restores them (small run)", () => {
  const [fixed, rotating, affinity] = hitRates(
    multiTurnTrace({ sessions: 4, turns: 5, gapSeconds: 20, seed: 52463 })
  )
  // 5 turns: (5-1)/(5+1) = 66.7% designed reuse
  expect(fixed).toBeCloseTo(4 / 6, 3)
  expect(affinity).toBeCloseTo(4 / 6, 3)
  expect(rotating!).toBeLessThan(0.5)
}, 60_000)
