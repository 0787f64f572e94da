import { expect, it } from "vitest"
import { report } from "./step-time-skew.js"

it("the example prints issue 5's exact numbers", () => {
  const lines = report()
  expect(lines[0]).toBe("attention pairs: rank 0 229,376, other ranks 32,768 (7.0:1)")
  expect(lines[1]).toBe("KV read per step: 229,376 x 576 x 78 = 10.31 GB versus 1.47 GB")
  expect(lines[2]).toBe("imbalance pairs: 196,608 per other rank per layer, 15.3 million over 78 layers")
  expect(lines[3]).toBe(
    "sync wait: 6 ms vs 1 ms local -> each of the seven waits 5 ms per layer, 390 ms per step over 78 layers"
  )
  expect(lines[4]).toMatch(
    /^glm-5\.3-dense \+ h200, batch 32: step \d+\.\d ms \(published ~30\), MoE \d+\.\d ms \(published ~19\)$/
  )
})
