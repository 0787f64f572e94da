/**
 * Workers that come and go on the pure core: whatever the interleaving of adds, removals, polls,
 * compactions, routes and releases, no request is lost or counted twice, each stays on the worker
 * it was placed on, and every in-flight count is back to 0 once all are released (fast-check).
 */
import { fc, test } from "@fast-check/vitest"
import { findPolicy } from "@loadledger/policies"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import {
  addWorker,
  applyPoll,
  compactWorkers,
  finish,
  makeRouter,
  type RouterState,
  removeWorker,
  route,
  statuses
} from "../src/index.js"

const urls = ["http://a:1", "http://b:1", "http://c:1", "http://d:1"]
type Op =
  | { readonly op: "add"; readonly w: number; readonly dp: number }
  | { readonly op: "remove"; readonly w: number }
  | { readonly op: "poll"; readonly w: number; readonly running: number }
  | { readonly op: "compact" }
  | { readonly op: "route" }
  | { readonly op: "release"; readonly pick: number }
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("add" as const), w: fc.nat(3), dp: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ op: fc.constant("remove" as const), w: fc.nat(3) }),
  fc.record({ op: fc.constant("poll" as const), w: fc.nat(3), running: fc.nat(5) }),
  fc.constant({ op: "compact" as const }),
  { arbitrary: fc.constant({ op: "route" as const }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat(1000) }), weight: 2 }
)

const total = (s: RouterState<unknown>) => s.inflightPerRank.reduce((a, b) => a + b, 0)

describe("workers that come and go", () => {
  for (const name of ["total-requests", "ledger-balanced-requests", "vllm-kv-pressure", "smg/cache-aware"])
    test.prop([fc.array(opArb, { minLength: 20, maxLength: 80 })], { numRuns: 150 })(
      `${name}: nothing lost, none counted twice, every count back to 0`,
      (ops) => {
        let s = makeRouter(findPolicy(name)!.make({ seed: 1 }), [{ url: urls[0]!, dpSize: 2 }], {
          staleAfterSeconds: 5
        }) as RouterState<unknown>
        const inFlight = new Map<string, string>() // request id -> worker url it was placed on
        let now = 1
        let n = 0
        for (const o of ops) {
          now += 0.01
          if (o.op === "add") {
            const r = addWorker(s, { url: urls[o.w]!, dpSize: o.dp }, now)
            expect("_tag" in r).toBe(false)
            if (!("_tag" in r)) s = r
          } else if (o.op === "remove") s = removeWorker(s, urls[o.w]!, now)
          else if (o.op === "compact") s = compactWorkers(s, now)
          else if (o.op === "poll") {
            const w = s.heard.workers.find((x) => x.url === urls[o.w])
            if (w !== undefined) {
              const rows = Array.from({ length: w.dpSize }, (_, dpRank) => ({
                dpRank,
                numRunningReqs: o.running,
                numWaitingReqs: 0,
                numTotalTokens: 10 * o.running
              }))
              s = applyPoll(s, w.url, Result.succeed(rows), now)
            }
          } else if (o.op === "route") {
            const id = `q${n++}`
            const r = route(s, { requestId: id, inputLength: 32 }, now)
            if (r._tag === "Routed") {
              s = r.state
              // never on a removed worker
              expect(statuses(s, now)[r.decision.rank]!.reason).not.toBe("ejected")
              inFlight.set(id, r.decision.workerUrl)
            }
          } else if (inFlight.size > 0) {
            const id = [...inFlight.keys()][o.pick % inFlight.size]!
            const r = finish(s, id, now)
            expect(r.found).toBe(true)
            s = r.state
            inFlight.delete(id)
            expect(finish(s, id, now).found).toBe(false)
          }
          // the counts are the requests in flight, each on the worker it was placed on
          expect(total(s)).toBe(inFlight.size)
          for (const [id, url] of inFlight) {
            const p = [...s.inflight].find(([k]) => k === id)![1]
            expect(s.heard.ranks[p.rank]!.workerUrl).toBe(url)
          }
          expect(s.inflightPerRank.length).toBe(s.heard.ranks.length)
        }
        for (const id of [...inFlight.keys()]) s = finish(s, id, now).state
        expect(s.inflightPerRank.every((x) => x === 0)).toBe(true)
        // and a compaction then drops every removed worker
        s = compactWorkers(s, now)
        expect(s.heard.workers.every((w) => w.ejected?.untilSeconds !== Number.POSITIVE_INFINITY)).toBe(true)
      }
    )

  it("a removed worker keeps its requests in flight until they end, then compacts away; re-added, it routes again", () => {
    const url = urls[1]!
    let s = makeRouter(
      findPolicy("total-requests")!.make({}),
      [
        { url: urls[0]!, dpSize: 1 },
        { url, dpSize: 1 }
      ],
      {
        staleAfterSeconds: 5
      }
    ) as RouterState<unknown>
    const rows = [{ dpRank: 0, numRunningReqs: 0, numWaitingReqs: 0, numTotalTokens: 0 }]
    s = applyPoll(
      applyPoll(s, urls[0]!, Result.succeed(rows), 1),
      url,
      Result.succeed([{ ...rows[0]!, numRunningReqs: 0 }]),
      1
    )
    s = applyPoll(s, urls[0]!, Result.succeed([{ ...rows[0]!, numRunningReqs: 9 }]), 1.01)
    const r = route(s, { requestId: "x", inputLength: 8 }, 1.02)
    expect(r._tag === "Routed" && r.decision.workerUrl).toBe(url)
    if (r._tag !== "Routed") return
    s = removeWorker(r.state, url, 1.03)
    expect(compactWorkers(s, 1.04)).toBe(s) // still one in flight there
    expect(s.inflightPerRank).toEqual([0, 1])
    s = compactWorkers(finish(s, "x", 1.05).state, 1.05)
    expect(s.heard.ranks.map((x) => x.id)).toEqual([`${urls[0]}@0`])
    const back = addWorker(s, { url, dpSize: 1 }, 1.06)
    expect("heard" in back && back.heard.ranks.map((x) => x.id)).toEqual([`${urls[0]}@0`, `${url}@0`])
    expect(addWorker(s, { url, dpSize: 0 }, 1.06)).toMatchObject({
      _tag: "RouterError",
      field: "worker.dpSize"
    })
  })
})
