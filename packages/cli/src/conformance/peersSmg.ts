/**
 * The conformance vector format of SGLang model gateway (SMG) policies, replayed against `Smg`:
 * the harness (router load guard, `finish`, health/load updates, polls) here, each policy's case
 * adapter in `peersSmgAdapters.ts`.
 *
 * @since 0.1.0
 */
import { Smg } from "@loadledger/policies"
import { diffExpect } from "./diff.js"
import { type J, smgCaseAdapter, smgReport } from "./peersSmgAdapters.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

const runDpMinToken = (
  c: PeerCase,
  ids: ReadonlyArray<string>,
  urls: ReadonlyArray<string>
): string | undefined => {
  const initial = new Map<string, Smg.SmgLoadReport | null>()
  c.workers.forEach((w, i) => {
    const lr = (w.load as J).load_report
    if (lr !== undefined) initial.set(urls[i]!, lr === null ? null : smgReport(lr as J))
  })
  let s = Smg.smgDpMinTokenUpdate({ dpCachedLoads: new Map() }, initial)
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    if (step.op === "update") {
      const lr = (step.load_reports ?? {}) as Record<string, J | null>
      s = Smg.smgDpMinTokenUpdate(
        s,
        new Map(
          Object.entries(lr).map(([id, r]) => [urls[ids.indexOf(id)]!, r === null ? null : smgReport(r)])
        )
      )
      continue
    }
    const r = (step.request ?? {}) as J
    const url = urls[ids.indexOf(r.target_worker as string)]!
    const cost = Smg.smgDpEstimatedCost(r.text as string | undefined)
    const out = Smg.smgDpMinTokenSelect(s, url, cost)
    s = out.state
    const m = s.dpCachedLoads.get(url)
    const actual = {
      dp_rank: out.dpRank ?? null,
      estimated_cost: cost,
      dp_cached_loads_after:
        m === undefined ? {} : Object.fromEntries([...m].map(([rk, v]) => [String(rk), v]))
    }
    const d = diffExpect(step.expect as J, actual, `step ${k} (route)`)
    if (d !== undefined) return d
  }
  return undefined
}

const runCase = (c: PeerCase): string | undefined => {
  const ids = c.workers.map((w) => w.id as string)
  const urls = c.workers.map((w) => w.url as string)
  if (c.policy === "smg/dp_min_token") return runDpMinToken(c, ids, urls)
  let workers: Array<Smg.SmgWorker> = c.workers.map((w) => {
    const l = w.load as J
    return {
      url: w.url as string,
      healthy: w.healthy as boolean,
      load: l.load as number,
      processedRequests: l.processed_requests as number,
      circuitBreakerCanExecute: l.circuit_breaker_can_execute as boolean
    }
  })
  const guard = c.config.router_load_guard !== false
  const policy = smgCaseAdapter(c, ids, urls)
  const initial = new Map<string, Smg.SmgLoadReport | null>()
  c.workers.forEach((w, i) => {
    const lr = (w.load as J).load_report
    if (lr !== undefined && lr !== null) initial.set(urls[i]!, smgReport(lr as J))
  })
  if (initial.size > 0) policy.update(initial)
  const routed: Array<number | undefined> = []
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    if (step.op === "update") {
      for (const u of (step.workers ?? []) as ReadonlyArray<J>) {
        const i = ids.indexOf(u.id as string)
        const l = (u.load ?? {}) as J
        const w = workers[i]!
        workers[i] = {
          ...w,
          healthy: (u.healthy as boolean | undefined) ?? w.healthy,
          load: (l.load as number | undefined) ?? w.load,
          processedRequests: (l.processed_requests as number | undefined) ?? w.processedRequests,
          circuitBreakerCanExecute:
            (l.circuit_breaker_can_execute as boolean | undefined) ?? w.circuitBreakerCanExecute
        }
      }
      const lr = step.load_reports as Record<string, J | null> | undefined
      if (lr !== undefined)
        policy.update(
          new Map(
            Object.entries(lr).map(([id, r]) => [urls[ids.indexOf(id)]!, r === null ? null : smgReport(r)])
          )
        )
      continue
    }
    if (step.op === "finish") {
      const i = ids.indexOf(step.worker as string)
      workers[i] = { ...workers[i]!, load: workers[i]!.load - 1 }
      continue
    }
    const { out, actual } = policy.route(step, workers)
    if (out._tag !== "SmgSelected") return `step ${k} (route): ${out.message}`
    const idx = out.index
    routed.push(idx)
    if (idx !== undefined) {
      const w = workers[idx]!
      workers = workers.slice()
      workers[idx] = {
        ...w,
        load: w.load + (guard ? 1 : 0),
        processedRequests: w.processedRequests + (out.processed ? 1 : 0)
      }
    }
    const d = diffExpect(
      step.expect as J,
      { ...actual, worker: idx === undefined ? null : ids[idx] },
      `step ${k} (route)`
    )
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The SMG (SGLang model gateway) peer golden vectors (`system: "smg"`): every case replays the
 * `Smg.*` cores of `@loadledger/policies` with the harness of `fixtures/reference/peers/README-smg.md`
 * (router load guard, `finish`, health/load updates, load polls).
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peersSmg } from "./peersSmg.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/smg.json", "utf8"))
 * peersSmg.name // => "loadledger-peer-policy-golden/smg"
 * peersSmg.detect(doc) // => true
 * const results = peersSmg.run(doc)
 * results.length // => 136
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peersSmg: VectorFormat = {
  name: "loadledger-peer-policy-golden/smg",
  detect: (doc) => isPeerDoc(doc, "smg"),
  run: (doc) => runCases(doc, runCase)
}
