/**
 * The conformance vector format of the vLLM production-stack router's policies, replayed against `ProductionStack`.
 *
 * @since 0.1.0
 */
import { ProductionStack } from "@loadledger/policies"
import { diffExpect } from "./diff.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type J = Record<string, unknown>

interface Endpoint {
  readonly id: string
  readonly url: string
  healthy: boolean
  qps: number | undefined
}

const runCase = (c: PeerCase): string | undefined => {
  const eps: Array<Endpoint> = c.workers.map((w) => ({
    id: w.id as string,
    url: w.url as string,
    healthy: w.healthy as boolean,
    qps: ((w.load ?? {}) as J).qps as number | undefined
  }))
  const idOf = (u: string | undefined) => (u === undefined ? null : (eps.find((e) => e.url === u)?.id ?? u))
  const urlOf = (id: string) => eps.find((e) => e.id === id)?.url ?? id
  let rr: ProductionStack.PsRoundRobinState = { nextIndex: new Map() }
  let pa = ProductionStack.psPrefixAwareInit()
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    if (step.op === "update") {
      for (const u of (step.workers ?? []) as ReadonlyArray<J>) {
        const e = eps.find((x) => x.id === u.id)!
        if (u.healthy !== undefined) e.healthy = u.healthy as boolean
        if (u.load !== undefined && u.load !== null) {
          const l = u.load as J
          if (Object.hasOwn(l, "qps")) e.qps = l.qps === null ? undefined : (l.qps as number)
        }
      }
      continue
    }
    const urls = eps.filter((e) => e.healthy).map((e) => e.url)
    const qps = new Map(eps.filter((e) => e.qps !== undefined).map((e) => [e.url, e.qps!]))
    const req = (step.request ?? {}) as J
    let actual: J
    switch (c.policy) {
      case "production-stack/roundrobin": {
        const out = ProductionStack.psRoundRobinSelect(rr, urls)
        rr = out.state
        actual = { worker: idOf(out.url), error: out.error }
        break
      }
      case "production-stack/session": {
        const out = ProductionStack.psSessionSelect(
          urls,
          qps,
          req.headers as Record<string, string> | undefined,
          req.body as J | undefined,
          c.config.session_key as string
        )
        actual = { worker: idOf(out.url), branch: out.branch, session_id: out.sessionId }
        break
      }
      case "production-stack/prefixaware": {
        const mock = step.mock_longest_prefix_match as J | undefined
        const out = ProductionStack.psPrefixAwareSelect(
          pa,
          urls,
          qps,
          ProductionStack.psPrompt(req.body as J | undefined),
          (step.random as ReadonlyArray<number> | undefined) ?? [],
          { prefixMinMatchLength: c.config.prefix_min_match_length as number | undefined },
          mock === undefined
            ? undefined
            : {
                matchLength: mock.match_length as number,
                endpoints: (mock.endpoints as ReadonlyArray<string>).map(urlOf)
              }
        )
        if (out._tag === "PolicyError") return `step ${k} (route): ${out.message}`
        pa = out.state
        actual = {
          worker: idOf(out.url),
          branch: out.branch,
          match_length: out.matchLength,
          candidates: out.candidates.map(idOf),
          error: out.error
        }
        break
      }
      default:
        return `unknown policy ${c.policy}`
    }
    const d = diffExpect(step.expect as J, actual, `step ${k} (route)`)
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The vLLM production-stack peer golden vectors (`system: "production-stack"`), replayed against
 * the `ProductionStack.*` cores of `@loadledger/policies` (`fixtures/reference/peers/README-production-stack.md`).
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peersProductionStack } from "./peersProductionStack.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/production-stack.json", "utf8"))
 * peersProductionStack.name // => "loadledger-peer-policy-golden/production-stack"
 * peersProductionStack.detect(doc) // => true
 * const results = peersProductionStack.run(doc)
 * results.length // => 51
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peersProductionStack: VectorFormat = {
  name: "loadledger-peer-policy-golden/production-stack",
  detect: (doc) => isPeerDoc(doc, "production-stack"),
  run: (doc) => runCases(doc, runCase)
}
