/**
 * The stale-prefix law (`stalePrefixViolations` of @loadledger/testing; smg-project/smg PR #2132)
 * on the router, for every registered policy: a request of prefix A goes to worker X; X is removed
 * (and compacted away), then a newcomer joins, or X itself comes back empty; the next request of
 * prefix A goes to the newcomer only if it does so after the same history with another prefix.
 * The router rebuilds the policy's state when its ranks change (`PolicyView`), so nothing the
 * removed worker left can steer: the law holds for every policy, the ones that break it under a
 * health change kept in the state (`stalePrefixExceptions`) included.
 */
import { policyEntries } from "@loadledger/policies"
import { stalePrefixExceptions } from "@loadledger/testing"
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
  route
} from "../src/index.js"

const URLS = ["http://a:1", "http://b:1", "http://c:1"]
const row = (running: number) => [
  {
    dpRank: 0,
    numRunningReqs: running,
    numWaitingReqs: 0,
    numTotalTokens: 256 * running,
    kvCacheUsage: running / 1000
  }
]
const request = (id: string, key: string) => ({
  requestId: id,
  inputLength: 4096,
  prefixHashes: Array.from({ length: 8 }, (_, i) => `${key}-${i}`),
  tokenIds: Array.from({ length: 2048 }, (_, i) => (key.charCodeAt(0) * 7919 + i * 31) % 50_000)
})

/** Where the next request of prefix A goes after a first request of prefix `first`, X's removal and `comer`'s arrival. */
const replay = (name: string, first: string, comer: "newcomer" | "same") => {
  let s = makeRouter(
    policyEntries()
      .find((e) => e.name === name)!
      .make({ seed: 1 }),
    URLS.map((url) => ({ url, dpSize: 1 })),
    { staleAfterSeconds: 5 }
  ) as RouterState<unknown>
  for (const url of URLS) s = applyPoll(s, url, Result.succeed(row(0)), 1)
  const r = route(s, request("q0", first), 1.1)
  if (r._tag !== "Routed") return undefined
  const x = r.decision.workerUrl
  s = finish(r.state, "q0", 1.2).state
  s = compactWorkers(removeWorker(s, x, 1.3), 1.3)
  const joined = comer === "newcomer" ? "http://d:1" : x
  s = addWorker(s, { url: joined, dpSize: 1 }, 1.4) as RouterState<unknown>
  // the one that joined holds one other request; the others are idle
  for (const url of [...URLS.filter((u) => u !== x), joined])
    s = applyPoll(s, url, Result.succeed(row(url === joined ? 1 : 0)), 1.5)
  const n = route(s, request("q1", "A"), 1.6)
  return { x, joined, chose: n._tag === "Routed" ? n.decision.workerUrl : undefined }
}

describe("the router: no placement from a removed worker's prefix entries", () => {
  const names = policyEntries().map((e) => e.name)
  for (const comer of ["newcomer", "same"] as const)
    it(`every registered policy (${comer === "newcomer" ? "a newcomer takes the removed worker's place" : "the same id comes back empty"})`, () => {
      const broken: Array<string> = []
      let checked = 0
      for (const name of names) {
        const subject = replay(name, "A", comer)
        const control = replay(name, "B", comer)
        if (subject === undefined || control === undefined || subject.x !== control.x) continue
        checked++
        if (subject.chose === subject.joined && control.chose !== subject.joined) broken.push(name)
      }
      expect(broken).toEqual([])
      expect(checked).toBeGreaterThanOrEqual(40)
    })

  it("the policies that break the law under a kept health change hold it behind the router", () => {
    for (const { policy } of stalePrefixExceptions) {
      const subject = replay(policy, "A", "same")!
      expect(subject, policy).toBeDefined()
      expect(
        subject.chose === subject.joined && replay(policy, "B", "same")!.chose !== subject.joined,
        policy
      ).toBe(false)
    }
  })
})
