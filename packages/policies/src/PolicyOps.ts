/**
 * The `loadledger-policy-ops` vector format: cases ported from upstream unit tests as a list of
 * operations on one registered policy (`observe`, `route` with its expected rank or error,
 * `finish`, `setStatus`), replayed by `replayPolicyOps`. Used by `loadledger conformance` and the
 * policies' own tests for policies with no upstream vector generator.
 *
 * @since 0.7.0
 */

import type { Policy, RankLoad, RouteRequest } from "./Policy.js"
import type { PolicyEntry, PolicyOptions } from "./PolicyEntry.js"
import { makeVllmRouterPolicy } from "./peers/vllm-router/Policies.js"
import { makeVllmRouterPowerOfTwo } from "./peers/vllm-router/PowerOfTwoPolicy.js"
import { makeVllmPowerOfTwo } from "./vllm/PowerOfTwo.js"
import { makeVllmFixedStart, makeVllmPrefixAffinity } from "./vllm/PrefixAffinity.js"

/**
 * One operation of a `loadledger-policy-ops` case. `route.expect` is `{ rank }` or `{ error }`
 * (a `PolicyError` reason).
 *
 * @category conformance
 * @since 0.7.0
 */
export type PolicyOp =
  | { readonly op: "observe"; readonly loads: ReadonlyArray<RankLoad>; readonly now: number }
  | {
      readonly op: "route"
      readonly request: RouteRequest
      readonly now: number
      readonly expect: { readonly rank?: number; readonly error?: string }
    }
  | { readonly op: "finish"; readonly ids: ReadonlyArray<string>; readonly now: number }
  | { readonly op: "setStatus"; readonly status: ReadonlyArray<boolean> }

/**
 * One case: the policy by registry name, the options of its factory (`options`; a policy whose
 * module takes options beyond `PolicyOptions`, such as `blockSize`, is built by that module),
 * the DP size and the operations. `test` names the upstream test it was ported from.
 *
 * @category conformance
 * @since 0.7.0
 */
export interface PolicyOpsCase {
  readonly id: string
  readonly test?: string | undefined
  readonly policy: string
  readonly options?: Readonly<Record<string, unknown>> | undefined
  readonly dpSize: number
  readonly ops: ReadonlyArray<PolicyOp>
}

// factories whose options go beyond PolicyOptions (vectors port upstream tests with their sizes)
const factories: Readonly<Record<string, (o: Record<string, unknown>) => Policy<unknown>>> = {
  "vllm-prefix-affinity": (o) => makeVllmPrefixAffinity(o) as Policy<unknown>,
  "vllm-kv-pressure-fixed-start": (o) => makeVllmFixedStart(o) as Policy<unknown>,
  "vllm-power-of-two": (o) => makeVllmPowerOfTwo(o) as Policy<unknown>,
  "vllm-router/consistent-hash": (o) => makeVllmRouterPolicy("consistent-hash", o) as Policy<unknown>,
  "vllm-router/rendezvous-hash": (o) => makeVllmRouterPolicy("rendezvous-hash", o) as Policy<unknown>,
  "vllm-router/power-of-two": (o) => makeVllmRouterPowerOfTwo(o) as Policy<unknown>
}

/**
 * Replay one case: `undefined` when every expectation holds, else the first difference
 * (`op 3 (route): rank expected 0, got 1`). `find` looks a policy up by name (the registry's
 * `findPolicy`); an unknown name is a difference, never a throw.
 *
 * @example
 * ```ts
 * import { findPolicy, replayPolicyOps } from "@loadledger/policies"
 * const c = {
 *   id: "tie", policy: "vllm-kv-pressure-fixed-start", dpSize: 2,
 *   ops: [{ op: "route" as const, now: 0, request: { requestId: "a", inputLength: 1 }, expect: { rank: 0 } }]
 * }
 * replayPolicyOps(c, findPolicy) // => undefined
 * replayPolicyOps({ ...c, policy: "nope" }, findPolicy) // => "no policy named nope"
 * ```
 *
 * @category conformance
 * @since 0.7.0
 */
export const replayPolicyOps = (
  c: PolicyOpsCase,
  find: (name: string) => PolicyEntry | undefined
): string | undefined => {
  const factory = factories[c.policy]
  const entry = find(c.policy)
  if (factory === undefined && entry === undefined) return `no policy named ${c.policy}`
  const options = c.options ?? {}
  const policy = factory !== undefined ? factory({ ...options }) : entry!.make(options as PolicyOptions)
  let s = policy.init(c.dpSize)
  for (let i = 0; i < c.ops.length; i++) {
    const op = c.ops[i]!
    if (op.op === "observe") s = policy.observe(s, op.loads, op.now)
    else if (op.op === "finish") s = policy.finish(s, op.ids, op.now)
    else if (op.op === "setStatus") s = policy.setStatus(s, op.status)
    else {
      const r = policy.route(s, op.request, op.now)
      const got = r._tag === "Routed" ? `rank ${r.rank}` : `error ${r.reason}`
      const want = op.expect.error !== undefined ? `error ${op.expect.error}` : `rank ${op.expect.rank}`
      if (got !== want) return `op ${i} (route ${op.request.requestId}): ${want} expected, got ${got}`
      if (r._tag === "Routed") s = r.state
      else if (r.state !== undefined) s = r.state
    }
  }
  return undefined
}
