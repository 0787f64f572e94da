/**
 * The conformance vector format `loadledger-policy-ops` (cases ported from upstream unit tests as
 * operations on one registered policy), replayed by `replayPolicyOps` from `@loadledger/policies`.
 *
 * @since 0.7.0
 */
import { findPolicy, type PolicyOpsCase, replayPolicyOps } from "@loadledger/policies"
import type { CaseResult, VectorFormat } from "./types.js"

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

/**
 * `{ format: "loadledger-policy-ops", source, cases }` files (e.g.
 * `packages/policies/test/fixtures/vllm/prefix-affinity.json`, ported from vllm's
 * `tests/v1/engine/test_dp_lb_prefix_affinity.py`): each case replayed op by op.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { policyOps } from "./policyOps.js"
 * const doc = JSON.parse(readFileSync("packages/policies/test/fixtures/vllm/prefix-affinity.json", "utf8"))
 * policyOps.detect(doc) // => true
 * policyOps.run(doc).filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.7.0
 */
export const policyOps: VectorFormat = {
  name: "loadledger-policy-ops",
  detect: (doc) => isObj(doc) && doc.format === "loadledger-policy-ops" && Array.isArray(doc.cases),
  run: (doc) =>
    ((doc as { cases: ReadonlyArray<PolicyOpsCase> }).cases ?? []).map((c): CaseResult => {
      const d = replayPolicyOps(c, findPolicy)
      return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
    })
}
