import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type CapacityOptions,
  type CapacityProbe,
  capacityStep,
  findCapacity,
  type PolicyResult,
  type SimConfig,
  searchCapacity,
  type TraceRequest
} from "../src/index.js"

const trace: ReadonlyArray<TraceRequest> = Array.from({ length: 200 }, (_, i) => ({
  requestId: `${i}`,
  arrivalSeconds: i,
  inputLength: 1,
  outputLength: 1
}))

/**
 * A group whose outcome at each rate is given: it keeps up at or below `capacity`; above it,
 * `rejectedAbove(rate)` requests are rejected. No simulation: the search alone is under test.
 */
const oracle =
  (capacity: number, rejectedAbove: (rate: number) => number) =>
  (rate: number): CapacityProbe => ({
    rate,
    keepsUp: rate <= capacity,
    backlog: rate <= capacity ? 0 : 1,
    result: { requests: { rejected: rate <= capacity ? 0 : rejectedAbove(rate) } } as PolicyResult
  })

/** The search run one probe at a time straight from `capacityStep`. */
const sequential = (options: CapacityOptions, at: (rate: number) => CapacityProbe) => {
  const probes: Array<CapacityProbe> = []
  for (;;) {
    const s = capacityStep(trace, "p", options, probes)
    if (s._tag !== "Probe") return s
    probes.push(at(s.rate))
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("searchCapacity", () => {
  it("takes the same probes, in the same order, and gives the same answer at any parallelism and any finishing order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.double({ min: 0.05, max: 20, noNaN: true }),
        fc.constantFrom(0.001, 0.01, 0.1),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom("none", "grow", "flat"),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 16 }),
        async (capacity, start, precision, parallel, rejections, delays) => {
          const rejectedAbove =
            rejections === "none" ? () => 0 : rejections === "grow" ? (r: number) => Math.ceil(r) : () => 5
          const at = oracle(capacity, rejectedAbove)
          const options = { start, precision }
          const want = sequential(options, at)
          let k = 0
          const onProbe: Array<number> = []
          const got = await searchCapacity(
            trace,
            "p",
            { ...options, parallel, onProbe: (p) => onProbe.push(p.rate) },
            async (rate) => {
              // each probe finishes after its own delay: speculative ones often before the one needed
              await sleep(delays[k++ % delays.length]!)
              return at(rate)
            }
          )
          expect(got).toEqual(want)
          expect(onProbe).toEqual(want.probes.map((p) => p.rate))
          // one at a time runs only what the search takes; more in flight may run speculative probes
          if (parallel === 1) expect(k).toBe(want.probes.length)
          else expect(k).toBeGreaterThanOrEqual(want.probes.length)
        }
      ),
      { numRuns: 60 }
    )
  })

  it("matches findCapacity on a simulated group, probe for probe", async () => {
    // one rank that needs 1 s per request; one request every second at 1x
    const config: SimConfig = {
      dpSize: 1,
      maxRunningRequests: 1,
      stepModel: (ranks) => ({
        stepSeconds: 1,
        tokenImbalanceRatio: 1,
        ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
      })
    }
    const policy = {
      name: "zero",
      make: () => ({
        name: "zero",
        init: () => null,
        observe: (s: unknown) => s,
        finish: (s: unknown) => s,
        setStatus: (s: unknown) => s,
        route: (s: unknown) => ({ _tag: "Routed" as const, rank: 0, state: s, explanation: {} })
      })
    }
    const { capacityProbe } = await import("../src/index.js")
    const want = findCapacity(config, trace, policy, { start: 0.3 })
    const got = await searchCapacity(trace, "zero", { start: 0.3, parallel: 3 }, async (rate) =>
      capacityProbe(config, trace, policy, rate, 0.02)
    )
    expect(want._tag).toBe("Capacity")
    expect(got).toEqual(want)
  })

  it("runs the next rate and the rates after either outcome of it at once", async () => {
    const at = oracle(3, () => 0)
    const asked: Array<number> = []
    let release = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    const search = searchCapacity(trace, "p", { parallel: 3 }, async (rate) => {
      asked.push(rate)
      await gate
      return at(rate)
    })
    await sleep(1)
    // 1x first; then 2x (kept up) and 0.5x (fell behind) before 1x's outcome is known
    expect(asked).toEqual([1, 2, 0.5])
    release()
    expect(await search).toEqual(sequential({}, at))
  })

  it("a probe that fails rejects the search only when the search takes its rate", async () => {
    const at = oracle(3, () => 0)
    const taken = sequential({}, at).probes.map((p) => p.rate)
    // 1, 2, 4 are taken (kept up, kept up, fell behind); 0.5 (after 1 falling behind) is only speculated
    expect(taken.slice(0, 3)).toEqual([1, 2, 4])
    const failing = (bad: number) => async (rate: number) => {
      await sleep(rate === 1 ? 5 : 0)
      if (rate === bad) throw new Error(`probe at ${rate} failed`)
      return at(rate)
    }
    const dropped = await searchCapacity(trace, "p", { parallel: 3 }, failing(0.5))
    expect(dropped).toEqual(sequential({}, at))
    await expect(searchCapacity(trace, "p", { parallel: 3 }, failing(4))).rejects.toThrow("probe at 4 failed")
  })

  it("stops on the errors findCapacity stops on", async () => {
    // rejections at every rate that do not fall when it halves: no rate serves every request
    const at = oracle(0, () => 7)
    const got = await searchCapacity(trace, "p", { parallel: 2 }, async (r) => at(r))
    expect(got._tag).toBe("CapacityError")
    expect(got._tag === "CapacityError" && got.message).toContain(
      "rejected 7 of 200 requests at 1x and 7 at 0.5x"
    )
    expect(await searchCapacity(trace, "p", { precision: 0 }, async (r) => at(r))).toMatchObject({
      _tag: "CapacityError",
      field: "precision"
    })
  })
})
