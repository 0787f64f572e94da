// One rule for a health list (issue: `setStatus` with a short list, an extra entry or a non-boolean
// was accepted silently, and each policy read it its own way: padded healthy, kept old, or copied
// `1` as health): every registered policy ignores a list `checkStatus` refuses and returns its
// state itself; a list of one boolean per rank is applied.
import { describe, expect, it } from "vitest"
import {
  checkStatus,
  DpController,
  type Policy,
  policyEntries,
  totalRequests,
  withKvAdmission,
  withStaleness
} from "../src/index.js"
import { expectWholeRegistry, registryRequest, registryRows } from "./support/registryRequest.js"

const never = (x: unknown) => x as ReadonlyArray<boolean>
// four ranks: each of these is refused by checkStatus(_, 4)
const badStatuses: ReadonlyArray<readonly [string, ReadonlyArray<boolean>]> = [
  ["empty", []],
  ["short", [false, false, false]],
  ["long", [true, true, true, true, false]],
  ["a number", never([true, 1, true, true])],
  ["a string", never([true, true, "false", true])],
  ["undefined", never([true, true, true, undefined])],
  ["null", never([null, true, true, true])],
  ["holes", never(new Array(4))],
  ["not an array", never("tttt")],
  ["null list", never(null)],
  ["absent list", never(undefined)]
]

// registered policies that read no health (documented: SGLang's TOTAL_* methods and
// FOLLOW_BOOTSTRAP_ROOM route by load or room alone, as upstream)
const healthBlind = ["follow-bootstrap-room", "total-requests", "total-tokens"]

describe("checkStatus", () => {
  it("names the list or the first entry at fault", () => {
    expect(checkStatus([true, false, true, true], 4)).toBeUndefined()
    expect(checkStatus([], 0)).toBeUndefined()
    for (const [label, status] of badStatuses) expect(checkStatus(status, 4), label).toBeDefined()
    expect(checkStatus([true], 4)).toMatchObject({
      reason: "InvalidInput",
      field: "status",
      message: "status must hold 4 booleans (one per rank), got 1 entries"
    })
    expect(checkStatus(never([true, 1, true, true]), 4)).toMatchObject({
      field: "status[1]",
      message: "status[1] must be a boolean, got number"
    })
    expect(checkStatus(never(new Array(4)), 4)?.field).toBe("status[0]")
    expect(checkStatus(never(null), 4)?.message).toBe("status must be an array of 4 booleans, got null")
  })

  it("DpController.setStatus applies only what it accepts", () => {
    const s = DpController.init("ROUND_ROBIN", 4)
    for (const [label, status] of badStatuses) {
      const out = DpController.setStatus(s, status)
      expect(out.applied, label).toBe(false)
      expect(out.state, label).toBe(s)
    }
    expect(DpController.setStatus(s, [true, false, true, true]).applied).toBe(true)
  })
})

describe("setStatus: one rule over the registry", () => {
  it("every registered policy returns its state itself for a refused list, from a fresh, observed or routed state", () => {
    const seen: Array<string> = []
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s0 = p.init(4)
      const s1 = p.observe(s0, registryRows, 1)
      const routed = p.route(s1, registryRequest(10), 1.001)
      if (routed._tag !== "Routed") throw new Error(`${entry.name} did not route: ${routed.message}`)
      const down = p.setStatus(routed.state, [true, false, true, true])
      for (const s of [s0, s1, routed.state, down])
        for (const [label, status] of badStatuses)
          expect(p.setStatus(s, status), `${entry.name} ${label}`).toBe(s)
      seen.push(entry.name)
    }
    expectWholeRegistry(seen, ["round-robin", "vllm-kv-pressure", "ledger-balanced", "smg/dp-min-token"])
  })

  it("every registered policy applies a list of one boolean per rank: no route to a rank marked down, none when all are", () => {
    const blind: Array<string> = []
    for (const entry of policyEntries()) {
      const p = entry.make({})
      const s1 = p.observe(p.init(4), registryRows, 1)
      const allDown = p.route(p.setStatus(s1, [false, false, false, false]), registryRequest(10), 1.001)
      if (allDown._tag === "Routed") {
        blind.push(entry.name)
        continue
      }
      expect(allDown.reason, entry.name).toBe("AllRanksUnavailable")
      // rank 1 down, then up again: never chosen while down, the list applied as given
      let s = p.setStatus(s1, [true, false, true, true])
      for (let i = 0; i < 8; i++) {
        const r = p.route(
          s,
          { ...registryRequest(10), requestId: `r${i}`, sessionId: `s${i}` },
          1.001 + i / 1000
        )
        if (r._tag !== "Routed") throw new Error(`${entry.name}: ${r.message}`)
        expect(r.rank, `${entry.name} route ${i}`).not.toBe(1)
        s = r.state
      }
      const up = p.setStatus(p.setStatus(s1, [false, false, false, false]), [true, true, true, true])
      expect(p.route(up, registryRequest(10), 1.001)._tag, `${entry.name} up again`).toBe("Routed")
    }
    expect(blind.sort()).toEqual(healthBlind)
  })

  it("withStaleness and withKvAdmission ignore a refused list without calling the inner policy", () => {
    let calls = 0
    const counting: Policy<unknown> = {
      ...(totalRequests as Policy<unknown>),
      setStatus: (s, status) => {
        calls++
        return totalRequests.setStatus(s as never, status)
      }
    }
    for (const p of [withStaleness(counting), withKvAdmission(counting)] as ReadonlyArray<Policy<unknown>>) {
      const s = p.observe(p.init(4), registryRows, 1)
      for (const [label, status] of badStatuses) expect(p.setStatus(s, status), label).toBe(s)
      expect(calls).toBe(0)
      expect(p.setStatus(s, [true, true, true, false])).not.toBe(s)
      expect(calls).toBe(1)
      calls = 0
    }
  })
})
