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
  inflight: number
}

const inflightOf = (l: J): number =>
  ((l.in_prefill as number | undefined) ?? 0) + ((l.in_decoding as number | undefined) ?? 0)

const byId = (eps: ReadonlyArray<Endpoint>, m: ReadonlyMap<string, number>): J =>
  Object.fromEntries([...m].map(([u, v]) => [eps.find((e) => e.url === u)?.id ?? u, v]))

/** One `production-stack/loadaware` step: `entry` `select_url` (the pure scorer) or `route_request`. */
const loadAware = (
  c: PeerCase,
  step: J,
  eps: ReadonlyArray<Endpoint>,
  urls: ReadonlyArray<string>,
  qps: ReadonlyMap<string, number>,
  req: J
): J => {
  const idOf = (u: string | undefined) => (u === undefined ? null : (eps.find((e) => e.url === u)?.id ?? u))
  // upstream reads request_stats only for engines in it (those with a qps); others have load 0
  const loads = new Map(eps.filter((e) => e.qps !== undefined).map((e) => [e.url, e.inflight]))
  const layout = new Map(
    Object.entries((step.layout_info ?? {}) as Record<string, [string, number]>).map(([i, v]) => [i, v[1]])
  )
  const bridge = ((c.config.instance_id_to_ip ?? []) as ReadonlyArray<[string, string]>).map(
    ([i, u]) => [i, u] as const
  )
  const prompt = step.prompt_tokens as number
  const beta = c.config.beta as number
  if (step.entry === "select_url") {
    const matched = ProductionStack.psLoadAwareMatchedByUrl(bridge, layout)
    const out = ProductionStack.psLoadAwareSelectUrl(urls, loads, matched, prompt, beta)
    return {
      worker: idOf(out.url),
      scores: byId(eps, out.scores),
      relative_loads: byId(eps, out.relativeLoads)
    }
  }
  const out = ProductionStack.psLoadAwareSelect({
    urls,
    loads,
    qps,
    layout,
    instanceToUrl: bridge,
    promptTokens: prompt,
    beta,
    headers: req.headers as Record<string, string> | undefined,
    body: req.body as J | undefined,
    sessionKey: (c.config.session_key as string | undefined) ?? "x-session-id"
  })
  if (out._tag === "PolicyError")
    return out.field === "urls" ? { worker: null, error: "HTTPException" } : { error: out.message }
  return {
    worker: idOf(out.url),
    branch: out.branch,
    session_id: out.sessionId,
    scores: byId(eps, out.scores),
    relative_loads: byId(eps, out.relativeLoads)
  }
}

const runCase = (c: PeerCase): string | undefined => {
  const eps: Array<Endpoint> = c.workers.map((w) => ({
    id: w.id as string,
    url: w.url as string,
    healthy: w.healthy as boolean,
    qps: ((w.load ?? {}) as J).qps as number | undefined,
    inflight: inflightOf((w.load ?? {}) as J)
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
          if (Object.hasOwn(l, "in_prefill") || Object.hasOwn(l, "in_decoding")) e.inflight = inflightOf(l)
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
      case "production-stack/loadaware": {
        actual = loadAware(c, step, eps, urls, qps, req)
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
 * results.length // => 86
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
