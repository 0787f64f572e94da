/**
 * The conformance vector format of Dynamo's rank-balanced cohort admission
 * (`system: "dynamo-admission"`), replayed against `Dynamo.dynamoRankBalanced*`.
 *
 * @since 0.8.0
 */
import { Dynamo } from "@loadledger/policies"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type J = Record<string, unknown>
type Pair = readonly [number, number]

const pair = (p: Pair) => ({ workerId: p[0], dpRank: p[1] })
const show = (x: unknown) => JSON.stringify(x)

// an action as the vectors write it: placement [worker, rank] or "any"
const asJson = (a: Dynamo.DynamoAdmissionAction): J => ({
  id: a.id,
  placement: a.placement === "any" ? "any" : [a.placement.workerId, a.placement.dpRank],
  ...(a.cohort === undefined ? {} : { cohort: a.cohort })
})

const sameActions = (want: unknown, got: ReadonlyArray<Dynamo.DynamoAdmissionAction>, at: string) => {
  const g = show(got.map(asJson))
  return show(want) === g ? undefined : `${at}: actions expected ${show(want)}, got ${g}`
}

const runCase = (c: PeerCase): string | undefined => {
  const cfg = c.config
  const init = Dynamo.dynamoRankBalancedInit(
    cfg.cohort_size as number,
    cfg.namespace as number,
    cfg.explicit_population_only === true
  )
  if ("_tag" in init) {
    const want = ((c.steps[0]?.expect ?? {}) as J).error_contains as string | undefined
    return c.steps[0]?.op === "init" && want !== undefined && init.message.includes(want)
      ? undefined
      : `init: unexpected error ${init.message}`
  }
  let s: Dynamo.DynamoRankBalancedState = init
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    const want = (step.expect ?? {}) as J
    const at = `step ${k} (${step.op})`
    if (step.op === "init") return `${at}: expected an init error, got none`
    if (step.op === "admit") {
      const r = step.request as J
      const pop = r.population as J | undefined
      const out = Dynamo.dynamoRankBalancedAdmit(s, {
        id: r.id as number,
        eligible: (r.eligible as ReadonlyArray<Pair>).map(pair),
        pinned: r.pinned === undefined ? undefined : pair(r.pinned as Pair),
        population: pop === undefined ? undefined : { id: pop.id as string, index: pop.index as number }
      })
      if ("_tag" in out) return `${at}: error ${out.message}`
      if (out.decision !== want.decision)
        return `${at}: decision expected ${show(want.decision)}, got "${out.decision}"`
      const m = want.message_contains as string | undefined
      if (m !== undefined && (out.decision !== "Reject" || !out.message.includes(m)))
        return `${at}: message expected to contain ${show(m)}`
      s = out.state
    } else if (step.op === "event") {
      const e = step.event as "reconcile" | { readonly aborted: number }
      const out = Dynamo.dynamoRankBalancedEvent(
        s,
        e === "reconcile" ? { kind: "Reconcile" } : { kind: "Aborted", id: e.aborted }
      )
      const d = sameActions(want.actions, out.actions, at)
      if (d !== undefined) return d
      s = out.state
    } else if (step.op === "close") {
      const out = Dynamo.dynamoRankBalancedClose(s, step.population as string, step.final_count as number)
      const e = want.error_contains as string | undefined
      if ("_tag" in out) {
        if (e === undefined || !out.message.includes(e)) return `${at}: unexpected error ${out.message}`
        continue
      }
      if (e !== undefined) return `${at}: expected an error containing ${show(e)}, got actions`
      const d = sameActions(want.actions, out.actions, at)
      if (d !== undefined) return d
      s = out.state
    } else return `${at}: unknown op`
  }
  return undefined
}

/**
 * Dynamo's rank-balanced cohort admission vectors (`system: "dynamo-admission"`,
 * `fixtures/reference/peers/README-dynamo.md` §7): `admit`, `event` and `close` steps, each
 * compared with the decision, the full list of released actions or the error.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peerDynamoAdmission } from "./peerDynamoAdmission.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/dynamo-admission.json", "utf8"))
 * peerDynamoAdmission.detect(doc) // => true
 * const results = peerDynamoAdmission.run(doc)
 * results.length // => 24
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.8.0
 */
export const peerDynamoAdmission: VectorFormat = {
  name: "loadledger-peer-policy-golden/dynamo-admission",
  detect: (doc) => isPeerDoc(doc, "dynamo-admission"),
  run: (doc) => runCases(doc, runCase)
}
