/**
 * The state law "state survives a change of the worker set or a failed poll without losing what
 * is still in flight" (issue 35, item 5), on the router: the policy's charges for requests in
 * flight are carried into the view rebuilt when the usable ranks change, and released by `finish`.
 * Reports of this fault: llm-d/llm-d#1950 (a counter dropped on an endpoint flap goes negative),
 * ai-dynamo/dynamo#13513 review "preserve live reservations across a same-ID topology flap",
 * vllm-project/router#197 (periodic health checks reset load counters of requests in flight).
 */
import { findPolicy } from "@loadledger/policies"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { addWorker, applyPoll, finish, makeRouter, type RouterState, route } from "../src/index.js"

const rows = [{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]
const three = (name: string) => {
  let s = makeRouter(
    findPolicy(name)!.make({ seed: 1 }),
    ["http://a:1", "http://b:1", "http://c:1"].map((url) => ({ url, dpSize: 1 })),
    { staleAfterSeconds: 5 }
  ) as RouterState<unknown>
  for (const url of ["http://a:1", "http://b:1", "http://c:1"]) s = applyPoll(s, url, Result.succeed(rows), 1)
  return s
}

/**
 * SGLang's DP-controller methods count no pinned request (upstream: a `routed_dp_rank` request
 * bypasses the budget and the counter), so they carry through their `charge` (policies
 * `SglangPolicies.ts`); the carry law over every policy is `@loadledger/testing`'s `carryViolations`.
 */
describe("in-flight charges outlive a rebuilt view", () => {
  for (const name of ["ledger-balanced-requests", "total-requests", "total-tokens", "round-robin"])
    it(`${name}: a failed poll of another worker, then a new worker, and the charges still steer`, () => {
      let s = three(name)
      const placed: Array<string> = []
      for (const id of ["q0", "q1"]) {
        const r = route(s, { requestId: id, inputLength: 8 }, 1.1)
        expect(r._tag).toBe("Routed")
        if (r._tag !== "Routed") return
        s = r.state
        placed.push(r.decision.workerUrl)
      }
      expect(new Set(placed).size).toBe(2)
      const gen = s.view.generation
      // one failed poll of the third worker: the usable ranks change, the view is rebuilt
      const third = ["http://a:1", "http://b:1", "http://c:1"].find((u) => !placed.includes(u))!
      s = applyPoll(s, third, Result.fail({ _tag: "FetchFailed", message: "refused" } as never), 1.2)
      s = addWorker(s, { url: "http://d:1", dpSize: 1 }, 1.2) as RouterState<unknown>
      s = applyPoll(s, "http://d:1", Result.succeed(rows), 1.2)
      const r = route(s, { requestId: "q2", inputLength: 8 }, 1.3)
      expect(r._tag === "Routed" && r.state.view.generation).toBeGreaterThan(gen)
      // the two ranks holding q0 and q1 are still charged: q2 goes elsewhere
      expect(r._tag === "Routed" && placed.includes(r.decision.workerUrl)).toBe(false)
      if (r._tag !== "Routed") return
      s = r.state
      expect(s.view.carried).toEqual(new Set(["q0", "q1"]))
      for (const id of ["q0", "q1", "q2"]) s = finish(s, id, 1.4).state
      expect(s.inflightPerRank.every((x) => x === 0)).toBe(true)
      // released in the policy too: the next two go to the lowest ranks again, one each
      const next = route(s, { requestId: "q3", inputLength: 8 }, 1.5)
      expect(next._tag).toBe("Routed")
    })
})
