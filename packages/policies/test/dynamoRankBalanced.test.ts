import { describe, expect, it } from "vitest"
import { Dynamo } from "../src/index.js"

// ai-dynamo/dynamo lib/kv-router/src/scheduling/queue_admission/rank_balanced.rs @ 35720b27
type S = Dynamo.DynamoRankBalancedState
const full = (workerId: number, n = 4) => Array.from({ length: n }, (_, dpRank) => ({ workerId, dpRank }))
const init = (size: number, explicit = false): S => {
  const s = Dynamo.dynamoRankBalancedInit(size, 7, explicit)
  if ("_tag" in s) throw new Error(s.message)
  return s
}
const admit = (s: S, req: Dynamo.DynamoAdmissionRequest): S => {
  const out = Dynamo.dynamoRankBalancedAdmit(s, req)
  if ("_tag" in out || out.decision !== "Defer") throw new Error(`not deferred: ${JSON.stringify(out)}`)
  return out.state
}

describe("dynamo rank-balanced cohort admission", () => {
  it("four full requests: one cohort, one rank each, the last arrival on rank 0", () => {
    let s = init(4)
    for (let id = 0; id < 4; id++) s = admit(s, { id, eligible: full(11) })
    const out = Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" })
    expect(out.actions.map((a) => [a.id, a.placement, a.cohort?.index])).toEqual([
      [3, { workerId: 11, dpRank: 0 }, 0],
      [2, { workerId: 11, dpRank: 1 }, 1],
      [1, { workerId: 11, dpRank: 2 }, 2],
      [0, { workerId: 11, dpRank: 3 }, 3]
    ])
    expect(new Set(out.actions.map((a) => a.cohort?.id))).toEqual(
      new Set(["dynamo-router-rank-wave:0000000000000007:0000000000000000"])
    )
    expect(out.state.nextCohort).toBe(1)
    expect(out.state.unscoped).toEqual([])
  })

  it("is pure: the input state still holds its queue after an event released it", () => {
    let s = init(2)
    for (let id = 0; id < 2; id++) s = admit(s, { id, eligible: full(1, 2) })
    const out = Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" })
    expect(out.actions).toHaveLength(2)
    expect(s.unscoped.map((p) => p.id)).toEqual([0, 1])
    expect(Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" }).actions).toEqual(out.actions)
  })

  it("a request that cannot augment stays queued for a later cohort", () => {
    let s = init(2)
    s = admit(s, { id: 0, eligible: [{ workerId: 1, dpRank: 0 }] })
    s = admit(s, { id: 1, eligible: [{ workerId: 1, dpRank: 0 }] })
    s = admit(s, { id: 2, eligible: [{ workerId: 1, dpRank: 1 }] })
    const out = Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" })
    expect(out.actions.map((a) => a.id)).toEqual([0, 2])
    expect(out.state.unscoped.map((p) => p.id)).toEqual([1])
  })

  it("completed populations are forgotten after 4096 (COMPLETED_POPULATION_RETENTION)", () => {
    let s = init(2, true)
    for (let i = 0; i <= 4096; i++) {
      const out = Dynamo.dynamoRankBalancedClose(s, `p${i}`, 0)
      if ("_tag" in out) throw new Error(out.message)
      s = out.state
    }
    expect(s.completed.size).toBe(4096)
    expect(s.completed.has("p0")).toBe(false)
    // p0 is no longer known as completed: closing it again at another count is accepted
    expect("_tag" in Dynamo.dynamoRankBalancedClose(s, "p0", 3)).toBe(false)
    expect("_tag" in Dynamo.dynamoRankBalancedClose(s, "p1", 3)).toBe(true)
  })

  it("bad input is a typed error naming the field", () => {
    const s = init(2)
    expect(Dynamo.dynamoRankBalancedInit(1, 7)).toMatchObject({
      _tag: "DynamoAdmissionError",
      field: "cohortSize"
    })
    expect(Dynamo.dynamoRankBalancedInit(2.5, 7)).toMatchObject({ field: "cohortSize" })
    expect(Dynamo.dynamoRankBalancedInit(2, -1)).toMatchObject({ field: "namespace" })
    expect(Dynamo.dynamoRankBalancedAdmit(s, { id: 1.5, eligible: [] })).toMatchObject({ field: "id" })
    expect(
      Dynamo.dynamoRankBalancedAdmit(s, { id: 1, eligible: [], population: { id: "", index: 0 } })
    ).toMatchObject({ field: "population.id" })
    expect(
      Dynamo.dynamoRankBalancedAdmit(s, { id: 1, eligible: [], population: { id: "a", index: -1 } })
    ).toMatchObject({ field: "population.index" })
    expect(Dynamo.dynamoRankBalancedClose(s, "a", Number.NaN)).toMatchObject({ field: "finalCount" })
    expect(Dynamo.dynamoRankBalancedClose(s, "", 1)).toMatchObject({ field: "id" })
  })

  it("populations are served in code-point order (Rust String order), not UTF-16 order", () => {
    // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 code unit
    let s = init(2, true)
    const ids = ["\u{1F600}", "\uFF5E"]
    let id = 0
    for (const p of ids)
      for (const index of [0, 1])
        s = admit(s, { id: id++, eligible: full(3, 2), population: { id: p, index } })
    const out = Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" })
    expect(out.actions.map((a) => a.id)).toEqual([3, 2, 1, 0])
  })
})
