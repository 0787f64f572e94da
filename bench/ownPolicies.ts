/**
 * ns per `route` (+ the matching `finish`) of loadledger's own policies (`ledger-balanced`,
 * `ledger-balanced-requests`, `cache-affinity`, `uncached-tokens`, the `makeScored` combinator with
 * two scorers, `ledger-scored`, `power-of-two-ledger`, and vLLM's balancer bare and behind
 * `withStaleness` / `withKvAdmission`, `speed-aware`, `step-time-aware`) at 8, 64 and 1024 ranks, next to a floor: a bare
 * lexicographic argmin over plain mutable arrays (published load plus charges), charging the
 * chosen rank in place and tracking the in-flight charges in a mutable Map, as the ledger does.
 *
 * Each step routes request k and finishes request k - 512, so about 512 charges stay in flight
 * (the ledger used to copy every charge of the chosen rank per route); `cache-affinity` requests
 * carry two prefix-block hashes (a shared system prompt out of 8, a per-request block) and a
 * session out of 256 (`uncached-tokens` and `step-time-aware` get the same prefix blocks). Timing: each policy in a process of its own with its floor, interleaved
 * rounds, each candidate in its own compiled loop and step, fastest round.
 *
 * @since 0.1.0
 */
import {
  findPolicy,
  makeCacheAffinity,
  makeLedgerBalanced,
  makeScored,
  makeStepTimeAware,
  makeUncachedTokens,
  makeVllmLb,
  type Policy,
  type RouteRequest,
  Scorers,
  withKvAdmission,
  withStaleness
} from "@loadledger/policies"
import {
  type BenchLoad,
  type Benchmark,
  type Candidate,
  consume,
  iterationsFor,
  nsPerOpInterleaved,
  prng,
  randomLoads,
  routeStep,
  sizes
} from "./harness.js"
import { policyTable, type Row } from "./table.js"

const loadsFor = (n: number): ReadonlyArray<BenchLoad> => randomLoads(n, { kvMax: 0.8 })

const requests = (withAffinity: boolean): ReadonlyArray<RouteRequest> => {
  const rnd = prng(11)
  return Array.from({ length: 1024 }, (_, i) => ({
    requestId: `r${i}`,
    inputLength: 1 + Math.floor(rnd() * 8192),
    ...(withAffinity
      ? { prefixHashes: [`sys${i & 7}`, `u${i}`], sessionId: `s${Math.floor(rnd() * 256)}` }
      : {})
  }))
}
const finishLists = Array.from({ length: 1024 }, (_, i) => [`r${i}`])

/** Lexicographic argmin of (a, b) over plain arrays, charge in place, in-flight Map. */
const floor = (
  loads: ReadonlyArray<BenchLoad>,
  reqs: ReadonlyArray<RouteRequest>,
  byTokens: boolean
): Candidate => {
  const n = loads.length
  const req = loads.map((l) => l.numRunningReqs + l.numWaitingReqs)
  const tok = loads.map((l) => l.numTotalTokens)
  const inFlight = new Map<string, number>()
  return {
    iterations: iterationsFor(4 * n + 200),
    step: (k) => {
      const a = byTokens ? tok : req
      const b = byTokens ? req : tok
      let best = 0
      let bestA = a[0]!
      let bestB = b[0]!
      for (let i = 1; i < n; i++) {
        const x = a[i]!
        if (x < bestA || (x === bestA && b[i]! < bestB)) {
          bestA = x
          bestB = b[i]!
          best = i
        }
      }
      const r = reqs[k & 1023]!
      req[best]! += 1
      tok[best]! += r.inputLength
      inFlight.set(r.requestId, best)
      const old = reqs[(k + 512) & 1023]!
      const e = inFlight.get(old.requestId)
      if (e !== undefined) {
        inFlight.delete(old.requestId)
        req[e]! -= 1
        tok[e]! -= old.inputLength
      }
      consume(best)
    }
  }
}

const routeCandidate = <S>(
  policy: Policy<S>,
  loads: ReadonlyArray<BenchLoad>,
  reqs: ReadonlyArray<RouteRequest>
): Candidate => ({
  iterations: iterationsFor(12 * loads.length + 1000),
  step: routeStep(policy, policy.observe(policy.init(loads.length), loads, 1), reqs, 1, finishLists)
})

const policies: Record<
  string,
  { readonly make: () => Policy<unknown>; readonly affinity: boolean; readonly byTokens: boolean }
> = {
  "ledger-balanced": { make: () => makeLedgerBalanced() as Policy<unknown>, affinity: false, byTokens: true },
  "ledger-balanced-requests": {
    make: () => makeLedgerBalanced({ metric: "requests" }) as Policy<unknown>,
    affinity: false,
    byTokens: false
  },
  "cache-affinity": { make: () => makeCacheAffinity() as Policy<unknown>, affinity: true, byTokens: false },
  "uncached-tokens": { make: () => makeUncachedTokens() as Policy<unknown>, affinity: true, byTokens: true },
  // issue 16's building blocks: the combinator with two scorers, the registered configurations,
  // and vLLM's balancer bare and wrapped (the wrappers' overhead is the difference)
  "scored tokens+requests": {
    make: () =>
      makeScored({
        scorers: [
          { scorer: Scorers.tokens, weight: 1 },
          { scorer: Scorers.requests, weight: 1 }
        ]
      }) as Policy<unknown>,
    affinity: false,
    byTokens: true
  },
  "ledger-scored": { make: () => findPolicy("ledger-scored")!.make({}), affinity: true, byTokens: true },
  "power-of-two-ledger": {
    make: () => findPolicy("power-of-two-ledger")!.make({}),
    affinity: false,
    byTokens: true
  },
  "vllm-kv-pressure": { make: () => makeVllmLb() as Policy<unknown>, affinity: false, byTokens: false },
  "vllm-kv-pressure+staleness": {
    make: () => withStaleness(makeVllmLb()) as Policy<unknown>,
    affinity: false,
    byTokens: false
  },
  "vllm-kv-pressure+kv-admission": {
    make: () => withKvAdmission(makeVllmLb()) as Policy<unknown>,
    affinity: false,
    byTokens: false
  },
  "vllm-kv-pressure+staleness+kv-admission": {
    make: () => findPolicy("vllm-kv-pressure+staleness+kv-admission")!.make({}),
    affinity: false,
    byTokens: false
  },
  // ledger-balanced's terms inside the speed wrapper (issue 30's hardware-slow ranks)
  "speed-aware": { make: () => findPolicy("speed-aware")!.make({}), affinity: false, byTokens: true },
  // as the compare sweep configures it: the engines' running-request cap (64) given
  "step-time-aware": {
    make: () => makeStepTimeAware({ maxRunningRequests: 64 }) as Policy<unknown>,
    affinity: true,
    byTokens: true
  },
  // the several-front-end scoring (no decode term, a home credit), as each of four vLLM front ends routes
  "step-time-aware x4 front ends": {
    make: () => makeStepTimeAware({ clientCount: 4, maxRunningRequests: 64 }) as Policy<unknown>,
    affinity: true,
    byTokens: true
  }
}

/**
 * Rows for one own policy (a key of the table above), measured in this process next to its floor.
 *
 * @since 0.1.0
 */
export const measureOwn = (name: string, rankSizes: ReadonlyArray<number> = sizes): Array<Row> => {
  const { make, affinity, byTokens } = policies[name]!
  const plain = requests(false)
  const reqs = affinity ? requests(true) : plain
  const policy = make()
  return rankSizes.map((n): Row => {
    const loads = loadsFor(n)
    const [f, ns] = nsPerOpInterleaved([floor(loads, plain, byTokens), routeCandidate(policy, loads, reqs)])
    return [n, ns!, f!]
  })
}

/**
 * The own-policy benchmark, registered in `bench/registry.ts`; each policy runs in a process of
 * its own next to its floor.
 *
 * @since 0.1.0
 */
export const ownPolicyBench: Benchmark = {
  name: "own policies: ns per route+finish vs a bare argmin floor",
  run: () => {
    const names = Object.keys(policies)
    policyTable(import.meta.url, "measureOwn", names)
  }
}

/** The rank counts of the power-of-d table (issue 16: 8, 1 024 and 16 384). */
const choiceSizes = [8, 1024, 16_384] as const

/**
 * Rows for one policy of the power-of-d table, at 8, 1 024 and 16 384 ranks.
 *
 * @since 0.4.0
 */
export const measureChoices = (name: string): Array<Row> => measureOwn(name, choiceSizes)

/**
 * Power of d choices at up to 16 384 ranks: `power-of-two-ledger` (O(d) per route, charges
 * batched) next to the bare argmin floor, a full scan over plain arrays that any scanning policy
 * pays at least (the own policies' table has `ledger-balanced` and `ledger-scored` at 8 to 1 024
 * ranks; at 16 384 a ledger route copies 16 384-long columns and a table row would take minutes).
 *
 * @since 0.4.0
 */
export const powerOfChoicesBench: Benchmark = {
  name: "power of d choices: ns per route+finish at 8, 1024 and 16384 ranks vs a full-scan floor",
  run: () => {
    policyTable(import.meta.url, "measureChoices", ["power-of-two-ledger"], undefined, choiceSizes)
  }
}

/** The registry's own policies, as a tree's policies package exports them. */
type Registry = Pick<typeof import("@loadledger/policies"), "ownPolicyEntries">

/**
 * Before and after in one run: every registered own policy (`ownPolicyEntries`, built with
 * `maxRunningRequests: 64`) from this tree and from a reference tree's policies source (`ref`,
 * e.g. `git -C /work/main archive HEAD packages/policies | tar -x -C /tmp/ref-main` with its
 * `node_modules` linked), timed interleaved in one process, ns per route + finish (512 in flight)
 * at 8 and 1 024 ranks (issue 30's target: <= 1 us at 8). Prints now, ref and now/ref; a policy
 * the reference tree does not register is timed alone.
 * Run: `tsx --conditions=@loadledger/source bench/ownPolicies.ts --ref /tmp/ref-main/packages/policies/src/index.ts`
 * (`--quick`: 8 ranks only).
 *
 * @since 0.6.0
 */
export const compareWithRef = async (ref: string, quick = false): Promise<void> => {
  const now = await import("@loadledger/policies")
  const old = (await import(ref)) as Registry
  for (const e of now.ownPolicyEntries) {
    const o = old.ownPolicyEntries.find((x) => x.name === e.name)
    const affinity = e.name !== "ledger-balanced" && e.name !== "ledger-balanced-requests"
    for (const n of quick ? [8] : [8, 1024]) {
      const loads = loadsFor(n)
      const reqs = requests(affinity)
      const make = (m: typeof e) => routeCandidate(m.make({ maxRunningRequests: 64 }), loads, reqs)
      const [a, b] = nsPerOpInterleaved(o === undefined ? [make(e)] : [make(e), make(o)])
      const vs = b === undefined ? "" : `, ref ${b.toFixed(0)} ns, now/ref ${(a! / b).toFixed(2)}`
      process.stdout.write(
        `${e.name.padEnd(42)} ${String(n).padStart(5)} ranks: now ${a!.toFixed(0)} ns${vs}\n`
      )
    }
  }
}

const refAt = process.argv.indexOf("--ref")
if (refAt >= 0 && process.argv[refAt + 1] !== undefined)
  await compareWithRef(process.argv[refAt + 1]!, process.argv.includes("--quick"))
