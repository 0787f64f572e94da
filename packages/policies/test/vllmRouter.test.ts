import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { findPolicy, type PolicyOpsCase, replayPolicyOps, VllmRouter } from "../src/index.js"

const cases: ReadonlyArray<PolicyOpsCase> = JSON.parse(
  readFileSync(new URL("./fixtures/vllm-router/hash-policies.json", import.meta.url), "utf8")
).cases

const W3 = ["http://worker1:8000", "http://worker2:8000", "http://worker3:8000"]
const rankOf = (
  name: VllmRouter.VllmRouterPolicyName,
  urls: ReadonlyArray<string>,
  sessionId: string,
  status?: boolean[]
) => {
  const p = VllmRouter.makeVllmRouterPolicy(name, { workerUrls: urls })
  let s = p.init(urls.length)
  if (status !== undefined) s = p.setStatus(s, status)
  const r = p.route(s, { requestId: "r", inputLength: 8, sessionId }, 0)
  return r._tag === "Routed" ? r.rank : r.reason
}

// vllm-project/router src/policies/{consistent_hash,rendezvous_hash,hash_key}.rs (commits in the fixture)
describe("vllm-router hash policies: vectors", () => {
  for (const c of cases)
    it(c.id, () => {
      expect(replayPolicyOps(c, findPolicy)).toBeUndefined()
    })

  it("a vector with a wrong expectation fails, naming the op", () => {
    const c = cases.find((x) => x.id === "rv-unhealthy-worker")!
    const ops = c.ops.map((o, i) => (i === 1 && o.op === "route" ? { ...o, expect: { rank: 0 } } : o))
    expect(replayPolicyOps({ ...c, ops }, findPolicy)).toMatch(
      /^op 1 \(route r0\): rank 0 expected, got rank 1/
    )
  })

  it("the two policies place the same keys differently (the vectors tell them apart)", () => {
    const c = cases.find((x) => x.id === "rv-8-ranks")!
    expect(replayPolicyOps({ ...c, policy: "vllm-router/consistent-hash" }, findPolicy)).toBeDefined()
  })
})

describe("vllm-router: upstream unit tests ported as properties", () => {
  it("test_rendezvous_distribution: 100 sessions reach all 3 workers", () => {
    const seen = new Set(Array.from({ length: 100 }, (_, i) => rankOf("rendezvous-hash", W3, `session_${i}`)))
    expect([...seen].sort()).toEqual([0, 1, 2])
  })

  it("test_rendezvous_minimal_redistribution: removing worker3 moves only its sessions", () => {
    for (let i = 0; i < 100; i++) {
      const three = rankOf("rendezvous-hash", W3, `session_${i}`)
      if (three !== 2) expect(rankOf("rendezvous-hash", W3.slice(0, 2), `session_${i}`)).toBe(three)
    }
  })

  it("test_fbi_hash_consistency, and the values of our oracle (fbi_hash compiled with rustc)", () => {
    expect(VllmRouter.fbiHash("test_session_123")).toBe(VllmRouter.fbiHash("test_session_123"))
    expect(VllmRouter.fbiHash("").toString(16)).toBe("c0663e029346e424")
    expect(VllmRouter.fbiHash("header:x-session-id:s1").toString(16)).toBe("e4f5071aa09e0e3d")
    expect(VllmRouter.fbiHash("x".repeat(300)).toString(16)).toBe("52000a5b87d3fb1c")
    expect(VllmRouter.fbiHash("héllo wörld ünïcode").toString(16)).toBe("beb3f2c78acc9fc")
    expect(VllmRouter.furcHash("http://worker1:8000:0", 2 ** 23 - 1)).toBe(7552980)
  })
})

// src/policies/hash_key.rs tests at 335c57e2ee621d7984ed645c9d23e871cd34331a
describe("vllmRouterHashKey (hash_key.rs tests)", () => {
  const key = VllmRouter.vllmRouterHashKey
  it("header priority and empty headers skipped", () => {
    expect(key({ "x-request-id": "req-1", "x-session-id": "sess-1" }, undefined)).toBe(
      "header:x-session-id:sess-1"
    )
    expect(key({ "x-session-id": "", "x-user-id": "user-1" }, undefined)).toBe("header:x-user-id:user-1")
    expect(key({ "x-custom-header": "val" }, undefined)).toBe("request:")
    expect(key({ "x-session-id": "from-header" }, '{"session_id": "from-body"}')).toBe(
      "header:x-session-id:from-header"
    )
  })
  it("body fields in upstream's order", () => {
    expect(key({}, '{"session_params": {"session_id": "nested"}, "session_id": "direct"}')).toBe(
      "session:nested"
    )
    expect(key({}, '{"user": "alice", "prompt": "hi"}')).toBe("user:alice")
    expect(key({}, '{"session_id": "legacy123", "prompt": "hi"}')).toBe("session:legacy123")
    expect(key({}, '{"user_id": "uid456", "prompt": "hi"}')).toBe("user:uid456")
    expect(key({}, "{'session_id': 'def456', 'prompt': 'world'}")).toBe("session:def456")
    expect(key({}, '{"session_id":"compact_value"}')).toBe("session:compact_value")
    expect(key({}, '{"prompt": "hello", "model": "llama"}')).toBe(
      'request:{"prompt": "hello", "model": "llama"}'
    )
  })
  it("the fallback: short text as is, long text by its hash", () => {
    expect(key({}, "short")).toBe("request:short")
    expect(key({}, "x".repeat(200))).toBe(
      `request_hash:${VllmRouter.fbiHash("x".repeat(200)).toString(16).padStart(16, "0")}`
    )
    expect(key({}, undefined)).toBe("request:")
  })
})

describe("vllm-router: the adapter's rules", () => {
  it("a pinned healthy rank is honoured, an unhealthy one refused", () => {
    const p = findPolicy("vllm-router/consistent-hash")!.make({})
    const s = p.setStatus(p.init(3), [true, false, true])
    const ok = p.route(s, { requestId: "a", inputLength: 4, routedDpRank: 2 }, 0)
    expect(ok._tag === "Routed" && ok.rank).toBe(2)
    const bad = p.route(s, { requestId: "b", inputLength: 4, routedDpRank: 1 }, 0)
    expect(bad._tag === "PolicyError" && [bad.reason, bad.field]).toEqual([
      "InvalidRoutedRank",
      "routedDpRank"
    ])
  })
  it("loads do not move a key; finish releases the request", () => {
    const p = VllmRouter.makeVllmRouterPolicy("rendezvous-hash")
    const s0 = p.init(4)
    const busy = [0, 1, 2, 3].map((dpRank) => ({ dpRank, numRunningReqs: dpRank * 50, numWaitingReqs: 0 }))
    const a = p.route(s0, { requestId: "a", inputLength: 4, sessionId: "k" }, 0)
    const b = p.route(p.observe(s0, busy, 1), { requestId: "a", inputLength: 4, sessionId: "k" }, 1)
    expect(a._tag === "Routed" && b._tag === "Routed" && a.rank === b.rank).toBe(true)
    if (a._tag !== "Routed") throw new Error(a.message)
    const released = p.finish(a.state, ["a"], 1)
    expect(released).not.toBe(a.state)
    // released once: a second finish of the same id changes nothing
    expect(p.finish(released, ["a"], 1)).toBe(released)
  })
})
