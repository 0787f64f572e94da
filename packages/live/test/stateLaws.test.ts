/**
 * The state laws of @loadledger/testing (issue 35, item 5) on the live router's pure core, over
 * every registered policy: in-flight counts are released on abort (vllm-project/router #215), a
 * rank over `overloadBound` is never chosen while another is under it and all over is the
 * explicit `Overloaded` refusal (ai-dynamo/dynamo #9688, smg-project/smg #2220), and an ejection
 * is cleared by the first healthy poll after it (sgl-project/sglang #31206, ai-dynamo/dynamo
 * #12138). Each law also fails, with a counterexample, on a deliberately broken router.
 */
import { findPolicy, policyEntries } from "@loadledger/policies"
import { markClearedLaw, overloadBoundLaw, type RouterHarness, releaseOnAbortLaw } from "@loadledger/testing"
import * as Result from "effect/Result"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyPoll,
  ejectWorker,
  finish,
  makeRouter,
  parseServeArgs,
  type RouterOptions,
  type RouterState,
  route,
  statuses
} from "../src/index.js"

const urls = ["http://a:1", "http://b:1", "http://c:1"]
const idle = [
  { dpRank: 0, timestamp: 1, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0, kvCacheUsage: 0 }
]

const polled = (name: string, options: Partial<RouterOptions> = {}): RouterState<unknown> => {
  let s = makeRouter(
    findPolicy(name)!.make({ seed: 1 }),
    urls.map((url) => ({ url, dpSize: 1 })),
    { staleAfterSeconds: 1e6, ...options }
  ) as RouterState<unknown>
  for (const url of urls) s = applyPoll(s, url, Result.succeed(idle), 1)
  return s
}

/** The pure core as a law harness; `broken` breaks it on purpose. */
const harness = (
  name: string,
  options: Partial<RouterOptions> = {},
  broken?: "abort-leaks"
): (() => RouterHarness) => {
  const start = polled(name, options)
  return () => {
    let s = start
    return {
      route: (id, now) => {
        // a PD bootstrap room, as SGLang's router sends: follow-bootstrap-room refuses a request without one
        const r = route(s, { requestId: id, inputLength: 16, bootstrapRoom: id.slice(4) }, now)
        if (r._tag === "RouterError") return { _tag: "Rejected", reason: r.reason }
        s = r.state
        return { _tag: "Placed", rank: r.decision.rank }
      },
      release: (id, how, now) => {
        if (how === "abort" && broken === "abort-leaks") return
        s = finish(s, id, now).state
      },
      inflight: () => s.inflightPerRank
    }
  }
}

const names = policyEntries().map((e) => e.name)

describe("in-flight counts are released on abort", () => {
  it("holds for the router over every registered policy", () => {
    expect(names.length).toBeGreaterThanOrEqual(40)
    for (const name of names)
      fc.assert(releaseOnAbortLaw({ make: harness(name), dpSize: 3 }), { numRuns: 15, seed: 7 })
  })

  it("fails on a router whose abort releases nothing, with a shrunk counterexample", () => {
    const out = fc.check(
      releaseOnAbortLaw({ make: harness("total-requests", {}, "abort-leaks"), dpSize: 3 }),
      {
        seed: 7
      }
    )
    expect(out.failed).toBe(true)
    // the smallest trace: one request, then every request still in flight is aborted
    expect(JSON.stringify(out.counterexample)).toBe('[[{"op":"route"}]]')
  })
})

describe("a rank over overloadBound is never chosen while another is under it", () => {
  it("holds for the router over every registered policy, and all over is Overloaded", () => {
    for (const name of names)
      fc.assert(overloadBoundLaw({ make: harness(name, { overloadBound: 2 }), dpSize: 3, bound: 2 }), {
        numRuns: 15,
        seed: 11
      })
  })

  it("fails on the router without the bound (the policy places a 7th request anyway)", () => {
    const out = fc.check(overloadBoundLaw({ make: harness("total-requests"), dpSize: 3, bound: 2 }), {
      seed: 11
    })
    expect(out.failed).toBe(true)
    // six routes fill every rank to the bound; the seventh is placed instead of refused
    expect(out.counterexample?.[0].filter((o) => o.op === "route").length).toBe(7)
  })

  it("replaces the policy's choice over the bound, and a pinned rank over it is refused by name", () => {
    let s = polled("round-robin", { overloadBound: 1 })
    const placed: Array<number> = []
    for (const id of ["a", "b", "c"]) {
      const r = route(s, { requestId: id, inputLength: 8 }, 2)
      if (r._tag !== "Routed") throw new Error(r.message)
      s = r.state
      placed.push(r.decision.rank)
    }
    expect(placed.sort()).toEqual([0, 1, 2])
    const full = route(s, { requestId: "d", inputLength: 8 }, 2)
    expect(full._tag === "RouterError" && [full.reason, full.message]).toEqual([
      "Overloaded",
      "every usable rank holds 1 requests in flight (overloadBound)"
    ])
    s = finish(s, "b", 3).state
    const pinned = route(s, { requestId: "e", inputLength: 8, routedDpRank: 0 }, 3)
    expect(pinned._tag === "RouterError" && [pinned.reason, pinned.field]).toEqual([
      "Overloaded",
      "routedDpRank"
    ])
    const next = route(s, { requestId: "f", inputLength: 8 }, 3)
    expect(next._tag === "Routed" && next.decision.rank).toBe(placed[1])
    expect(
      makeRouter(findPolicy("round-robin")!.make({}), [], { staleAfterSeconds: 1, overloadBound: 0 }).error
        ?.field
    ).toBe("options.overloadBound")
  })
})

it("`serve --overload-bound N` sets the bound, and refuses one that is no integer >= 1", () => {
  const a = parseServeArgs(["--worker", "http://127.0.0.1:9001", "--overload-bound", "64"])
  expect(typeof a === "object" && "workers" in a && a.overloadBound).toBe(64)
  expect(parseServeArgs(["--worker", "http://127.0.0.1:9001", "--overload-bound", "0"])).toMatchObject({
    error: expect.stringContaining("--overload-bound")
  })
})

/** Worker a of the router as a mark harness (an ejection held far longer than the trace). */
const markHarness = (broken?: "ejection-outlasts-reports") => () => {
  let s = makeRouter(
    findPolicy("total-requests")!.make({}),
    [
      { url: urls[0]!, dpSize: 1 },
      { url: urls[1]!, dpSize: 1 }
    ],
    {
      staleAfterSeconds: 1e6
    }
  ) as RouterState<unknown>
  s = applyPoll(s, urls[1]!, Result.succeed(idle), 0)
  let markedAt: number | undefined
  return {
    mark: (now: number) => {
      markedAt = now
      s = ejectWorker(s, urls[0]!, 1e6, "3 consecutive failed requests", now)
    },
    report: (healthy: boolean, now: number) => {
      s = applyPoll(
        s,
        urls[0]!,
        healthy
          ? Result.succeed(idle)
          : Result.fail({ _tag: "PollFailure", kind: "http-status", message: "503" }),
        now
      )
      // the fault as reported: the ejection keeps its hold whatever the polls say
      if (broken !== undefined && markedAt !== undefined)
        s = ejectWorker(s, urls[0]!, 1e6 - (now - markedAt), "still held", now)
    },
    usable: (now: number) => statuses(s, now)[0]!.condition === "known"
  }
}

describe("an ejection is cleared by the first healthy poll after it", () => {
  it("holds for the router", () => {
    fc.assert(markClearedLaw({ make: markHarness() }), { numRuns: 200, seed: 3 })
  })

  it("fails on a router whose ejection outlasts the healthy reports", () => {
    const out = fc.check(markClearedLaw({ make: markHarness("ejection-outlasts-reports") }), { seed: 3 })
    expect(out.failed).toBe(true)
    expect(out.counterexample).toEqual([["mark", "healthy"]])
  })
})
