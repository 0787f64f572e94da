import { expect, it } from "vitest"
import { compare, defaultPolicies, markdown, readTrace } from "./compare-policies.js"

it("compares the five policies on the same arrivals and prints one Markdown table per rate", () => {
  const trace = readTrace(new URL("traces/mooncake/conversation_trace.jsonl", import.meta.url).pathname)
  const rows = compare(trace, { rates: [0.1, 0.2], limit: 200 })
  expect(rows.map((r) => [r.rateScale, r.result.policy])).toEqual(
    [0.1, 0.2].flatMap((rate) => defaultPolicies.map((p) => [rate, p]))
  )
  for (const { result } of rows) {
    expect(result.requests).toEqual({ total: 200, finished: 200, unfinished: 0, rejected: 0, stalled: 0 })
    expect(result.requestsPerRank.reduce((a, b) => a + b, 0)).toBe(200)
  }
  const lines = markdown(rows)
  expect(lines[0]).toBe("rate x0.1, 200 requests")
  expect(lines[2]).toBe(
    "| policy | TTFT p50 / p90 / p99 s | ITL p50 / p99 ms | E2E p50 / p99 s | cache hit | req/rank min-max | TTFT p99 vs total-tokens |"
  )
  expect(lines.filter((l) => l.startsWith("| cache-affinity |"))).toHaveLength(2)
  // deterministic: the same run gives the same table
  expect(markdown(compare(trace, { rates: [0.1], limit: 200 }))).toEqual(lines.slice(0, 10))
})
