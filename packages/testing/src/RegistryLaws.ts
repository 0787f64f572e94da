/**
 * Every policy law applied to every policy of the registry.
 *
 * @since 0.2.0
 */
import type { PolicyEntry, RankLoad, RouteRequest } from "@loadledger/policies"
import fc from "fast-check"
import { lawExceptions } from "./LawExceptions.js"
import { policyLawPredicates } from "./LawPredicates.js"
import type { LawException, LawName, PolicyArbitraries } from "./LawTypes.js"
import { lawNames, policyLaws } from "./PolicyLaws.js"

/**
 * One check of {@link registryLawCases}: `policy` must satisfy `law` (`expect: "holds"`, checked by
 * fast-check), or breaks it on purpose (`"broken"`, with the exception's `reason`: its stated
 * counterexample must violate the law). `check` throws when the expectation fails.
 *
 * @category laws
 * @since 0.2.0
 */
export interface RegistryLawCase {
  readonly policy: string
  readonly law: LawName
  readonly expect: "holds" | "broken"
  readonly reason?: string | undefined
  readonly check: () => void
}

/**
 * Options of {@link registryLawCases}: fast-check runs per law (default 60) and a seed (default:
 * fast-check's own).
 *
 * @category laws
 * @since 0.2.0
 */
export interface RegistryLawOptions {
  readonly numRuns?: number | undefined
  readonly seed?: number | undefined
}

/**
 * The generators the registry laws use, shared by every policy: 1..8 ranks; loads with a KV gauge and
 * waiting uncached tokens each present or absent; requests with a 64-bit bootstrap room, and sometimes a session and prefix
 * hashes, so every policy's inputs take part.
 *
 * @example
 * ```ts
 * import { registryArbitraries } from "@loadledger/testing"
 * import fc from "fast-check"
 * const loads = fc.sample(registryArbitraries.load!(3), { numRuns: 50, seed: 1 })
 * loads.every((l) => l.dpRank === 3 && l.numRunningReqs! <= 64) // => true
 * loads.some((l) => l.kvCacheUsage === undefined) // => true
 * const requests = fc.sample(registryArbitraries.request!, { numRuns: 50, seed: 1 })
 * requests.every((r) => r.inputLength >= 1 && r.inputLength <= 8192) // => true
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const registryArbitraries: PolicyArbitraries = {
  dpSize: fc.integer({ min: 1, max: 8 }),
  maxRequests: 12,
  load: (dpRank: number): fc.Arbitrary<RankLoad> =>
    fc.record({
      dpRank: fc.constant(dpRank),
      timestamp: fc.integer({ min: 1000, max: 1_000_000 }).map((ms) => ms / 1000),
      numRunningReqs: fc.nat({ max: 64 }),
      numWaitingReqs: fc.nat({ max: 64 }),
      numTotalTokens: fc.nat({ max: 200_000 }),
      kvCacheUsage: fc.option(
        fc.integer({ min: 0, max: 100 }).map((p) => p / 100),
        { nil: undefined }
      ),
      // SGLang's own queue gauge: SMG least-load reads it (with KV usage) to score from a report
      numWaitingUncachedTokens: fc.option(fc.nat({ max: 50_000 }), { nil: undefined })
    }),
  request: fc.record({
    requestId: fc.uuid(),
    inputLength: fc.integer({ min: 1, max: 8192 }),
    bootstrapRoom: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n }).map(String),
    sessionId: fc.option(fc.constantFrom("s1", "s2", "s3"), { nil: undefined }),
    prefixHashes: fc.option(fc.array(fc.constantFrom("h1", "h2", "h3", "h4"), { maxLength: 4 }), {
      nil: undefined
    })
  }) satisfies fc.Arbitrary<RouteRequest>
}

const fail = (message: string) => () => {
  throw new Error(message)
}

/**
 * Every law of `PolicyLaws` for every entry of `entries` (built with `make({})`), minus the listed
 * exceptions, which are checked the other way: the exception's counterexample must break the law.
 * A newly registered policy gets every law with no wiring; an exception for a policy that is not
 * registered, a repeated exception, or one whose counterexample does not break the law is a
 * failing case.
 *
 * **When to use**: one test file runs `for (const c of registryLawCases(policyEntries())) it(..., c.check)`.
 *
 * @example
 * ```ts
 * import { policyEntries } from "@loadledger/policies"
 * import { registryLawCases } from "@loadledger/testing"
 * const cases = registryLawCases(policyEntries(), undefined, { numRuns: 5 })
 * cases.find((c) => c.policy === "total-requests" && c.law === "permutationEquivariant")?.expect // => "broken"
 * cases.find((c) => c.policy === "ledger-balanced" && c.law === "unknownNeverAttractive")?.expect // => "holds"
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const registryLawCases = (
  entries: ReadonlyArray<PolicyEntry>,
  exceptions: ReadonlyArray<LawException> = lawExceptions,
  options: RegistryLawOptions = {}
): ReadonlyArray<RegistryLawCase> => {
  const params = { numRuns: options.numRuns ?? 60, seed: options.seed }
  const cases: Array<RegistryLawCase> = []
  const names = new Set(entries.map((e) => e.name))
  const seen = new Set<string>()
  for (const x of exceptions) {
    const key = `${x.policy} / ${x.law}`
    if (!names.has(x.policy))
      cases.push({ ...x, expect: "broken", check: fail(`law exception for ${key}: no such policy`) })
    if (seen.has(key))
      cases.push({ ...x, expect: "broken", check: fail(`law exception ${key} is listed twice`) })
    seen.add(key)
  }
  for (const entry of entries) {
    const policy = entry.make({})
    const laws = policyLaws(policy, registryArbitraries)
    const holds = policyLawPredicates(policy)
    for (const law of lawNames) {
      const x = exceptions.find((e) => e.policy === entry.name && e.law === law)
      if (x === undefined) {
        // every law is a property over its own input; fast-check runs each the same way
        const property = laws[law] as fc.IPropertyWithHooks<[unknown]>
        cases.push({ policy: entry.name, law, expect: "holds", check: () => fc.assert(property, params) })
        continue
      }
      const broken = () => {
        const ok = (holds[x.law] as (...input: ReadonlyArray<unknown>) => boolean)(...x.counterexample)
        if (ok)
          throw new Error(`law exception ${x.policy} / ${x.law}: the stated counterexample satisfies the law`)
      }
      cases.push({ policy: entry.name, law, expect: "broken", reason: x.reason, check: broken })
    }
  }
  return cases
}
