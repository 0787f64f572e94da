/**
 * ns per `route` for each SGLang policy at 8, 64 and 1024 ranks, next to the floor: a bare argmin
 * loop over plain mutable arrays doing the same pick and charge (one key for TOTAL_REQUESTS, and
 * shown for ROUND_ROBIN and FOLLOW_BOOTSTRAP_ROOM too; (tokens, requests) for TOTAL_TOKENS).
 *
 * Requests arrive 1 us apart, so the 20 ms refresh throttle lets one route in 20 000 refresh, as
 * in a burst; every `route` returns a new state and leaves the old one valid and unchanged (the
 * explanation is built when read, and the step does not read it). Timing: each policy in a process
 * of its own with its floor, interleaved rounds, each candidate in its own compiled loop and step
 * (see `bench/harness.ts`), fastest round. FOLLOW_BOOTSTRAP_ROOM parses a ~19-digit decimal room on
 * every route, which alone costs several argmin floors at 8 ranks: the table is followed by that
 * parse's own cost, measured bare.
 *
 * `TOTAL_REQUESTS (plain)` and `TOTAL_TOKENS (plain)` are the plain persistent reference the
 * policies' `ChargedState` is checked against: `DpController.dispatchRequest` (refresh, then
 * `schedule`, which copies the per-rank arrays on every charge), with the explanation left unbuilt
 * as the policies leave theirs. Run with `--compare` to see both on the built code.
 *
 * @since 0.1.0
 */
import { DpController, type Policy, type RouteRequest, sglangPolicies } from "@loadledger/policies"
import {
  type BenchLoad,
  type Benchmark,
  type Candidate,
  consume,
  inChild,
  iterationsFor,
  nsPerOpInterleaved,
  prng,
  type Routable,
  randomLoads,
  routeStep,
  sizes
} from "./harness.js"
import { policyTable, type Row } from "./table.js"

const loadsFor = (n: number): ReadonlyArray<BenchLoad> => randomLoads(n)

const requestsFor = (): ReadonlyArray<RouteRequest> => {
  const rnd = prng(7)
  return Array.from({ length: 1024 }, (_, i) => ({
    requestId: `r${i}`,
    inputLength: 1 + Math.floor(rnd() * 8192),
    bootstrapRoom: String(BigInt(Math.floor(rnd() * 2 ** 52)) * 4099n) // decimal string, as in traces
  }))
}

/** argmin over one plain array, then `+1` in place. */
const floorRequests = (loads: ReadonlyArray<BenchLoad>): Candidate => {
  const req = loads.map((l) => l.numRunningReqs + l.numWaitingReqs)
  const n = req.length
  return {
    iterations: iterationsFor(2 * n),
    step: () => {
      let best = 0
      let bestReq = req[0]!
      for (let i = 1; i < n; i++) {
        const v = req[i]!
        if (v < bestReq) {
          bestReq = v
          best = i
        }
      }
      req[best]! += 1
      consume(best)
    }
  }
}

/** Lexicographic argmin over two plain arrays, then `+1` / `+inputLength` in place. */
const floorTokens = (loads: ReadonlyArray<BenchLoad>, reqs: ReadonlyArray<RouteRequest>): Candidate => {
  const req = loads.map((l) => l.numRunningReqs + l.numWaitingReqs)
  const tok = loads.map((l) => l.numTotalTokens)
  const n = req.length
  return {
    iterations: iterationsFor(2 * n),
    step: (k) => {
      let best = 0
      let bestTok = tok[0]!
      let bestReq = req[0]!
      for (let i = 1; i < n; i++) {
        const t = tok[i]!
        if (t < bestTok || (t === bestTok && req[i]! < bestReq)) {
          bestTok = t
          bestReq = req[i]!
          best = i
        }
      }
      req[best]! += 1
      tok[best]! += reqs[k & 1023]!.inputLength
      consume(best)
    }
  }
}

/**
 * What FOLLOW_BOOTSTRAP_ROOM must do per route whatever the policy around it: read the room's
 * decimal digits (a loop that only sums their char codes) and reduce them modulo the rank count
 * (the policy's own parser, through the public `DpController.schedule`, which adds one small
 * result object). ns per room at 8 ranks.
 *
 * @since 0.1.0
 */
export const measureRoomParse = (): {
  readonly readNs: number
  readonly parseNs: number
  readonly digits: number
} => {
  const rooms = requestsFor().map((r) => r.bootstrapRoom as string)
  const roomState = DpController.init("FOLLOW_BOOTSTRAP_ROOM", 8)
  const roomReqs = rooms.map((bootstrapRoom, i) => ({ requestId: `r${i}`, inputLength: 1, bootstrapRoom }))
  const [readNs, parseNs] = nsPerOpInterleaved([
    {
      iterations: iterationsFor(60),
      step: (k) => {
        const room = rooms[k & 1023]!
        let t = 0
        for (let i = 0; i < room.length; i++) t += room.charCodeAt(i)
        consume(t)
      }
    },
    {
      iterations: iterationsFor(60),
      step: (k) => {
        const out = DpController.schedule(roomState, roomReqs[k & 1023]!)
        consume("rank" in out ? out.rank : -1)
      }
    }
  ])
  const digits = rooms.reduce((a, r) => a + r.length, 0) / rooms.length
  return { readNs: readNs!, parseNs: parseNs!, digits }
}

/** One immutable `route` per step, threading the returned state (its own compiled step). */
const routeCandidate = <S>(
  policy: Policy<S>,
  loads: ReadonlyArray<BenchLoad>,
  reqs: ReadonlyArray<RouteRequest>
): Candidate => ({
  iterations: iterationsFor(4 * loads.length + 50),
  step: routeStep(policy, policy.observe(policy.init(loads.length), loads, 0), reqs, 1)
})

/**
 * The plain persistent reference as a policy's `route`: `DpController.dispatchRequest` (copies the
 * per-rank arrays on each charge), its result as a `Routed` whose explanation is not built.
 */
const plainRoute: Routable<DpController.DpControllerState> = {
  route: (state, request, now) => {
    const out = DpController.dispatchRequest(state, request as RouteRequest, now)
    return out.rank === undefined
      ? { _tag: "PolicyError" }
      : { _tag: "Routed", rank: out.rank, state: out.state }
  },
  finish: (state) => state
}

/** The plain reference's candidate: same loads, same requests, same start as {@link routeCandidate}. */
const plainCandidate = (
  method: "TOTAL_REQUESTS" | "TOTAL_TOKENS",
  loads: ReadonlyArray<BenchLoad>,
  reqs: ReadonlyArray<RouteRequest>
): Candidate => ({
  iterations: iterationsFor(4 * loads.length + 50),
  step: routeStep(
    plainRoute,
    DpController.publish(DpController.init(method, loads.length), loads, 0),
    reqs,
    1
  )
})

/** Timed passes per size: more than the harness default, as the 8-rank figures are a few ns. */
const passes = 24

/**
 * Rows for one SGLang method (or its plain reference, the name ending in {@link plainSuffix}), measured in this process: the method's floor and its `route`,
 * interleaved, at each size. Called in a child process by `sglangPolicyBench`.
 *
 * @since 0.1.0
 */
export const measureSglang = (name: string): Array<Row> => {
  const reqs = requestsFor()
  const plain = name.endsWith(plainSuffix)
  const method = (plain ? name.slice(0, -plainSuffix.length) : name) as keyof typeof sglangPolicies
  const policy = sglangPolicies[method]
  return sizes.map((n): Row => {
    const loads = loadsFor(n)
    const [floor, ns] = nsPerOpInterleaved(
      [
        method === "TOTAL_TOKENS" ? floorTokens(loads, reqs) : floorRequests(loads),
        plain && (method === "TOTAL_REQUESTS" || method === "TOTAL_TOKENS")
          ? plainCandidate(method, loads, reqs)
          : routeCandidate(policy, loads, reqs)
      ],
      passes
    )
    return [n, ns!, floor!]
  })
}

/** The name suffix of a plain-reference row. */
const plainSuffix = " (plain)"

/**
 * The SGLang policy benchmark: prints one row per (policy, ranks); each policy runs in a process
 * of its own next to its floor (see `inChild`).
 *
 * @since 0.1.0
 */
export const sglangPolicyBench: Benchmark = {
  name: "SGLang policies: ns per route vs a bare argmin floor",
  run: () => {
    const methods = [
      ...Object.keys(sglangPolicies),
      `TOTAL_REQUESTS${plainSuffix}`,
      `TOTAL_TOKENS${plainSuffix}`
    ]
    const tables = policyTable(import.meta.url, "measureSglang", methods, (n) =>
      n <= 8 ? 3 : n >= 1024 ? 2 : undefined
    )
    const rows = (tables.built ?? tables.tsx)!
    const room = inChild<ReturnType<typeof measureRoomParse>>(import.meta.url, "measureRoomParse", "")
    const at8 = rows[methods.indexOf("FOLLOW_BOOTSTRAP_ROOM")]![0]!
    process.stdout.write(
      `\nFOLLOW_BOOTSTRAP_ROOM parses a ${room.digits.toFixed(1)}-digit decimal room on every route. Here, only reading\n` +
        `its digits takes ${room.readNs.toFixed(1)} ns, ${(room.readNs / at8[2]).toFixed(1)}x the 8-rank argmin floor, so no exact parser of ` +
        `string rooms\ncan meet <=3x of that floor at 8 ranks. The bare floor-modulo takes ${room.parseNs.toFixed(1)} ns and the ` +
        `route ${at8[1].toFixed(1)} ns,\n${(at8[1] / room.parseNs).toFixed(2)}x the bare floor-modulo.\n`
    )
  }
}
