/**
 * Issue 30 item 4 (d) and (e): a throwing injected clock never crashes the live router (it falls
 * back to the last good reading), and worker URLs that differ only in the case of their scheme or
 * host name one worker (RFC 4343), while the path keeps its case.
 */
import { fc, test } from "@fast-check/vitest"
import { totalRequests } from "@loadledger/policies"
import { describe, expect, it } from "vitest"
import { addWorker, makeRouter, removeWorker, startLiveRouter, statuses } from "../src/index.js"
import { safeClock } from "../src/internal/safeClock.js"
import { workerKey } from "../src/internal/workerKey.js"

type Reading =
  | { readonly kind: "ok"; readonly t: number }
  | { readonly kind: "throw" }
  | { readonly kind: "bad"; readonly v: unknown }
const readingArb: fc.Arbitrary<Reading> = fc.oneof(
  fc.record({ kind: fc.constant("ok" as const), t: fc.double({ min: 0, max: 1e9, noNaN: true }) }),
  fc.constant({ kind: "throw" as const }),
  fc.record({
    kind: fc.constant("bad" as const),
    v: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, "1", undefined)
  })
)

describe("a throwing injected clock (issue 30 4d)", () => {
  test.prop([fc.array(readingArb, { minLength: 1, maxLength: 40 })])(
    "every reading is finite: the clock's own when good, else the last good one",
    (readings) => {
      let i = 0
      const faults: Array<string> = []
      const clock = safeClock(
        () => {
          const r = readings[i++]!
          if (r.kind === "throw") throw new Error("clock down")
          return (r.kind === "ok" ? r.t : r.v) as number
        },
        (f) => faults.push(f.field)
      )
      let last: number | undefined
      for (const r of readings) {
        const t = clock()
        expect(Number.isFinite(t)).toBe(true)
        if (r.kind === "ok") {
          expect(t).toBe(r.t)
          last = r.t
        } else if (last !== undefined) expect(t).toBe(last)
      }
      expect(faults.length).toBe(readings.filter((r) => r.kind !== "ok").length)
      expect(faults.every((f) => f === "clock")).toBe(true)
    }
  )

  it("the live router routes, reports ranks and closes with a clock that always throws", async () => {
    const router = startLiveRouter({
      sources: [
        { url: "http://127.0.0.1:9", dpSize: 2, kind: "sglang-v1-loads", intervalMs: 50, timeoutMs: 50 }
      ],
      policy: totalRequests,
      staleAfterSeconds: 1,
      clock: () => {
        throw new Error("clock down")
      }
    })
    await router.ready
    expect(router.ranks().map((r) => r.condition)).toEqual(["unhealthy", "unhealthy"])
    expect(router.route({ requestId: "r1", inputLength: 5 })._tag).toBe("RouterError")
    await router.close()
  })
})

const flipCase = (s: string, mask: ReadonlyArray<boolean>): string =>
  [...s].map((c, i) => (mask[i % mask.length] === true ? c.toUpperCase() : c.toLowerCase())).join("")

describe("hosts that differ only in case are one worker (issue 30 4e)", () => {
  test.prop([
    fc.constantFrom("gpu-node-1.example", "localhost", "10.0.0.7", "[fe80::a]"),
    fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
    fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
    fc.integer({ min: 1, max: 4 })
  ])("adding or removing a case variant touches the same worker", (host, m1, m2, dp) => {
    const a = `${flipCase("http", m1)}://${flipCase(host, m1)}:8000`
    const b = `${flipCase("http", m2)}://${flipCase(host, m2)}:8000/`
    const s0 = makeRouter(totalRequests, [{ url: a, dpSize: dp }], { staleAfterSeconds: 1 })
    const s1 = addWorker(s0, { url: b, dpSize: dp }, 1)
    expect("_tag" in s1).toBe(false)
    if ("_tag" in s1) return
    expect(statuses(s1, 1).length).toBe(dp)
    const s2 = removeWorker(s1, b, 2)
    expect(statuses(s2, 2).map((r) => r.reason)).toEqual(Array.from({ length: dp }, () => "ejected"))
  })

  it("keeps user info, port and path as given, lower-cases scheme and host", () => {
    expect(workerKey("HTTP://User@GPU-1.Example:8000/V1/")).toBe("http://User@gpu-1.example:8000/V1")
    expect(workerKey("http://a:1/X")).not.toBe(workerKey("http://a:1/x"))
    expect(workerKey("not a url/")).toBe("not a url")
  })

  it("refuses two configured sources that differ only in host case", () => {
    const r = startLiveRouter({
      sources: [
        { url: "http://GPU:9", dpSize: 1, kind: "sglang-v1-loads", intervalMs: 50, timeoutMs: 50 },
        { url: "http://gpu:9", dpSize: 1, kind: "sglang-v1-loads", intervalMs: 50, timeoutMs: 50 }
      ],
      policy: totalRequests,
      staleAfterSeconds: 1
    })
    expect(r.error?.field).toBe("sources[1].url")
  })
})
