// Inputs of the registry-wide input-rule tests (inputLength.test.ts, now.test.ts): four published
// ranks, a request carrying everything the pickiest policy wants (a room, a session, prefix hashes),
// and a policy error reduced to what the rules compare.
import { expect } from "vitest"
import { type PolicyError, policyEntries, type RankLoad, type RouteRequest } from "../../src/index.js"

export const registryRows: ReadonlyArray<RankLoad> = [0, 1, 2, 3].map((dpRank) => ({
  dpRank,
  timestamp: 1,
  numRunningReqs: dpRank,
  numWaitingReqs: 0,
  numTotalTokens: 100 * dpRank,
  kvCacheUsage: 0.1
}))

export const registryRequest = (inputLength: number, routedDpRank?: number): RouteRequest => ({
  requestId: "r",
  inputLength,
  routedDpRank,
  bootstrapRoom: "7",
  sessionId: "s",
  prefixHashes: ["a", "b"]
})

export const errorOf = (out: unknown) => {
  const e = out as PolicyError
  return { _tag: e._tag, reason: e.reason, field: e.field, message: e.message }
}

/** The names a registry-wide loop visited include `names` and cover every registered policy. */
export const expectWholeRegistry = (seen: ReadonlyArray<string>, names: ReadonlyArray<string>): void => {
  for (const name of names) expect(seen).toContain(name)
  expect(seen.length).toBe(policyEntries().length)
}
