import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeRouterMetrics } from "../src/index.js"

/** The label values of the samples of `name` on an exposition page, unescaped per the 0.0.4 text format. */
const labelValues = (page: string, name: string, label: string): Array<string> => {
  const out: Array<string> = []
  for (const line of page.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue
    // a label value: `"` then (escape | any char but `\`, `"`, LF) then `"`
    const m = new RegExp(`${label}="((?:\\\\[\\\\"n]|[^\\\\"\\n])*)"`).exec(line)
    if (m === null) throw new Error(`no well-formed ${label} in: ${line}`)
    out.push(m[1]!.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c)))
  }
  return out
}

describe("router /metrics label escaping", () => {
  it('escapes ", \\ and newline in label values; every sample stays on one line', async () => {
    const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
    const worker = 'http://h:1/a"b\\c\nd'
    m.ejection(worker)
    m.pollFailure(worker, "decode")
    const page = await m.registry.metrics()
    expect(page).toContain('loadledger_router_ejections_total{worker="http://h:1/a\\"b\\\\c\\nd"} 1')
    expect(labelValues(page, "loadledger_router_ejections_total", "worker")).toEqual([worker])
    expect(labelValues(page, "loadledger_router_poll_failures_total", "worker")).toEqual([worker])
    for (const line of page.split("\n")) if (line !== "") expect(line).toMatch(/^(#|loadledger_|[a-z_]+[{ ])/)
  })
  it("any string round-trips through a label value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 40 }), async (worker) => {
        const m = makeRouterMetrics(() => ({ ranks: [], inflightPerRank: [] }))
        m.ejection(worker)
        const page = await m.registry.metrics()
        expect(labelValues(page, "loadledger_router_ejections_total", "worker")).toEqual([worker])
      }),
      { numRuns: 200 }
    )
  })
})
