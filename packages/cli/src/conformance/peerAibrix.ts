/**
 * Replays fixtures/reference/peers/aibrix*.json (AIBrix gateway routing) against the `Aibrix` cores
 * (the `aibrix/slo*` cases through `peerAibrixSlo.ts`).
 *
 * @since 0.2.0
 */
import { Aibrix } from "@loadledger/policies"
import { firstDiff } from "./diff.js"
import { runAibrixSloCase } from "./peerAibrixSlo.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type Obj = Record<string, unknown>
type Metrics = Record<string, number | Aibrix.AibrixHistogram | undefined>

const toNumber = (x: unknown): number =>
  x === "NaN"
    ? Number.NaN
    : x === "Infinity"
      ? Number.POSITIVE_INFINITY
      : x === "-Infinity"
        ? Number.NEGATIVE_INFINITY
        : (x as number)

const runCase = (c: PeerCase): string | undefined => {
  if (c.policy.startsWith("aibrix/slo")) return runAibrixSloCase(c)
  const strategy = c.policy.slice("aibrix/".length)
  const tracking = c.config["gateway_request_tracking"] !== false
  const blockSize = (c.config["prefix_cache_block_size"] as number | undefined) ?? 4
  const prefixConfig: Aibrix.AibrixPrefixConfig = {
    podRunningRequestImbalanceAbsCount: c.config["pod_running_request_imbalance_abs_count"] as
      | number
      | undefined,
    standardDeviationFactor: c.config["standard_deviation_factor"] as number | undefined,
    prefixCacheBlockSize: blockSize
  }
  const synthetic = (c.config["synthetic_scorers"] ?? {}) as Record<string, { polarity: "least" | "most" }>
  const pods = c.workers.map((w) => ({
    id: w.id,
    healthy: w["healthy"] !== false,
    metrics: { ...((w["load"] ?? {}) as Metrics) } as Metrics
  }))
  let index = Aibrix.aibrixPrefixIndex()
  const bump = (id: string, d: number, metric = "realtime_num_requests_running") => {
    const p = pods.find((x) => x.id === id)!
    const v = p.metrics[metric]
    p.metrics[metric] = (typeof v === "number" ? v : 0) + d
  }
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    if (st.op === "update") {
      for (const u of st["workers"] as ReadonlyArray<Obj>) {
        const p = pods.find((x) => x.id === u["id"])!
        if (typeof u["healthy"] === "boolean") p.healthy = u["healthy"]
        for (const [key, v] of Object.entries((u["load"] ?? {}) as Obj)) {
          if (v === null) delete p.metrics[key]
          else p.metrics[key] = v as number
        }
      }
      continue
    }
    if (st.op === "finish") {
      if (tracking) bump(st["worker"] as string, -1)
      if (strategy === "power-of-two") bump(st["worker"] as string, -1, "po2_req_count")
      continue
    }
    if (st.op !== "route") return `step ${k}: unknown op ${st.op}`
    const ready = pods.filter((p) => p.healthy).map((p) => ({ id: p.id, metrics: p.metrics }))
    const draws = (st["random"] ?? []) as ReadonlyArray<number>
    const text = ((st["request"] as Obj)["text"] as string | undefined) ?? ""
    const hashes = Aibrix.aibrixPromptHashes(text, blockSize)
    const scoreMap = (scores: ReadonlyArray<number | undefined>): Obj => {
      const o: Obj = {}
      scores.forEach((s, i) => {
        if (s !== undefined) o[ready[i]!.id] = s
      })
      return o
    }
    let actual: Obj
    let chosen: string | undefined
    let items =
      strategy === "multi" ? Aibrix.parseAibrixMix(c.config["routing_strategy"] as string) : undefined
    if (items !== undefined && !Array.isArray(items))
      return `step ${k}: ${(items as { message: string }).message}`
    const mix = items as ReadonlyArray<Aibrix.AibrixMixItem> | undefined
    const legacy =
      mix !== undefined && mix.length === 1 && synthetic[mix[0]!.name] === undefined
        ? mix[0]!.name
        : undefined
    const single = strategy === "multi" ? legacy : strategy
    if (single === "power-of-two") {
      const counts = ready.map((p) =>
        typeof p.metrics["po2_req_count"] === "number" ? p.metrics["po2_req_count"] : 0
      )
      const r = Aibrix.powerOfTwo(counts, draws)
      if (r === undefined) actual = { worker: null, error: true }
      else {
        chosen = ready[r.index]!.id
        const ids = [ready[r.pair[0]]!.id, ready[r.pair[1]]!.id]
        actual =
          r.drawsUsed === 0
            ? { worker: chosen }
            : {
                worker: chosen,
                candidates: ids,
                scores: Object.fromEntries(r.pair.map((j) => [ready[j]!.id, counts[j]]))
              }
        bump(chosen, +1, "po2_req_count")
      }
    } else if (single === "prefix-cache") {
      const r = Aibrix.routePrefixCache(ready, hashes, index, prefixConfig, draws)
      if (r === undefined) actual = { worker: null, error: true }
      else {
        index = r.prefixIndex
        chosen = ready[r.index]!.id
        actual = {
          worker: chosen,
          selection: r.selection,
          load_imbalanced: r.loadImbalanced,
          matched_pods: Object.fromEntries(r.matchedPods),
          num_prefix_blocks: hashes.length
        }
      }
    } else if (single !== undefined) {
      const r = Aibrix.routeStrategy(single as Aibrix.AibrixStrategy, ready, draws)
      if (r._tag === "AibrixNoPods")
        actual =
          single === "least-request" ||
          single === "random" ||
          single === "load-balance" ||
          single === "least-utilization"
            ? { worker: null, error: true }
            : { worker: null, error: true, scores: {} }
      else {
        chosen = ready[r.index]!.id
        actual = { worker: chosen }
        if (single !== "random") actual["scores"] = scoreMap(r.scores)
        if (r.fallback !== undefined) actual["fallback"] = r.fallback
      }
    } else {
      items = mix!
      if (ready.length === 0) actual = { worker: null, error: true }
      else if (ready.length === 1) {
        chosen = ready[0]!.id
        actual = { worker: chosen }
      } else {
        const scored = mix!.map((it) => {
          const syn = synthetic[it.name]
          const scorer: Aibrix.AibrixScorer | undefined =
            syn !== undefined
              ? {
                  polarity: syn.polarity,
                  scores: ready.map((p) => {
                    const raw = (p.metrics["raw_scores"] as unknown as Obj | undefined)?.[it.name]
                    return raw === undefined ? undefined : toNumber(raw)
                  })
                }
              : Aibrix.aibrixScorer(it.name, ready, hashes, index)
          return {
            ...it,
            scorer: scorer ?? { polarity: "least" as const, scores: ready.map(() => undefined) }
          }
        })
        const r = Aibrix.routeAibrixMix(ready.length, scored)
        chosen = ready[r.index]!.id
        const norm: Obj = {}
        for (const n of r.normalized)
          norm[n.name] = Object.fromEntries(n.scores.map((s, i) => [ready[i]!.id, s]))
        actual = {
          worker: chosen,
          scores: Object.fromEntries(r.scores.map((s, i) => [ready[i]!.id, s])),
          normalized: norm
        }
      }
      if (chosen !== undefined && hashes.length > 0 && mix!.some((it) => it.name === "prefix-cache"))
        index = Aibrix.aibrixAddPrefix(index, hashes, chosen)
    }
    if (chosen !== undefined && tracking) bump(chosen, +1)
    const d = firstDiff(st["expect"], actual, `step ${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The AIBrix gateway vector format (`system: "aibrix"`), as specified in
 * fixtures/reference/peers/README-aibrix.md.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peerAibrix } from "./peerAibrix.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/aibrix.json", "utf8"))
 * peerAibrix.name // => "loadledger-peer-policy-golden/aibrix"
 * peerAibrix.detect(doc) // => true
 * const results = peerAibrix.run(doc)
 * results.length // => 129
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peerAibrix: VectorFormat = {
  name: "loadledger-peer-policy-golden/aibrix",
  detect: (doc) => isPeerDoc(doc, "aibrix"),
  run: (doc) => runCases(doc, runCase)
}
