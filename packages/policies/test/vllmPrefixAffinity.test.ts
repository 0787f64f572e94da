import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { findPolicy, makeVllmPrefixAffinity, type PolicyOpsCase, replayPolicyOps } from "../src/index.js"

const load = (f: string): ReadonlyArray<PolicyOpsCase> =>
  JSON.parse(readFileSync(new URL(`./fixtures/vllm/${f}`, import.meta.url), "utf8")).cases

describe("vLLM tie-breaks: vectors ported from upstream", () => {
  for (const file of ["prefix-affinity.json", "fixed-start.json"])
    for (const c of load(file))
      it(`${file} ${c.id}`, () => {
        expect(replayPolicyOps(c, findPolicy)).toBeUndefined()
      })

  it("a vector with a wrong expectation fails, naming the op", () => {
    const c = load("prefix-affinity.json")[0]!
    const op = c.ops[0]!
    const wrong = { ...c, ops: [{ ...op, expect: { rank: 3 } }] } as PolicyOpsCase
    expect(replayPolicyOps(wrong, findPolicy)).toBe("op 0 (route t0): rank 3 expected, got rank 0")
  })

  it("the rotating entry does not stick: the same turns go round the engines", () => {
    const c = { ...load("prefix-affinity.json")[0]!, policy: "vllm-kv-pressure", options: {} }
    expect(replayPolicyOps(c, findPolicy)).toBe("op 3 (route t1): rank 0 expected, got rank 1")
  })

  it("the registry marks the proposal and the old tie-break", () => {
    expect(findPolicy("vllm-prefix-affinity")?.proposed).toBe("vllm-project/vllm#52464")
    expect(findPolicy("vllm-kv-pressure-fixed-start")?.proposed).toBeUndefined()
    expect(findPolicy("vllm-kv-pressure")?.proposed).toBeUndefined()
  })

  it("an unhealthy remembered engine does not win the tie", () => {
    const p = makeVllmPrefixAffinity({ blockSize: 2 })
    const idle = [0, 1].map((dpRank) => ({
      dpRank,
      numWaitingReqs: 0,
      numRunningReqs: 0,
      numTotalTokens: 0,
      kvCacheUsage: 0
    }))
    const req = (id: string) => ({ requestId: id, inputLength: 2, tokenIds: [5, 6] })
    const a = p.route(p.init(2), req("a"), 0)
    if (a._tag !== "Routed") throw new Error("a")
    const s = p.setStatus(p.observe(p.finish(a.state, ["a"], 0), idle, 0), [false, true])
    const b = p.route(s, req("b"), 0)
    expect(b._tag === "Routed" && b.rank).toBe(1)
  })
})
