/**
 * Replays fixtures/reference/peers/dynamo.json (Dynamo KV router selectors) against
 * `Dynamo.selectDefaultWorker`, `Dynamo.softmaxSampleIndex` and the vLLM-style selector.
 *
 * @since 0.2.0
 */
import { Dynamo } from "@loadledger/policies"
import { firstDiff } from "./diff.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type Obj = Record<string, unknown>
const num = (x: unknown): number | undefined => (typeof x === "number" ? x : undefined)

const toWorker = (w: Obj): Dynamo.DynamoWorker => {
  const l = w["load"] as Obj | undefined
  const o = w["overlap"] as Obj | undefined
  const rt = w["routing"] as Obj | undefined
  return {
    workerId: w["worker_id"] as number,
    dpRank: w["dp_rank"] as number,
    load:
      l === undefined
        ? undefined
        : {
            activePrefillTokens: num(l["active_prefill_tokens"]) ?? 0,
            activeDecodeBlocks: num(l["active_decode_blocks"]) ?? 0,
            additionalActiveBlocks: num(l["additional_active_blocks"]) ?? 0,
            activeRequests: num(l["active_requests"]) ?? 0
          },
    overlap:
      o === undefined
        ? undefined
        : {
            deviceBlocks: num(o["device_blocks"]),
            hostPinnedBlocks: num(o["host_pinned_blocks"]),
            diskBlocks: num(o["disk_blocks"]),
            effectiveOverlapBlocks: num(o["effective_overlap_blocks"]),
            effectiveCachedTokens: num(o["effective_cached_tokens"])
          },
    overloaded: w["overloaded"] === true,
    preferredTaintMultiplier: rt === undefined ? undefined : num(rt["preferred_taint_multiplier"])
  }
}

const toConfig = (c: Obj): Dynamo.DynamoKvRouterConfig => ({
  overlapScoreCredit: num(c["overlap_score_credit"]),
  overlapScoreCreditDecay: num(c["overlap_score_credit_decay"]),
  prefillLoadScale: num(c["prefill_load_scale"]),
  hostCacheHitWeight: num(c["host_cache_hit_weight"]),
  diskCacheHitWeight: num(c["disk_cache_hit_weight"]),
  sharedCacheMultiplier: num(c["shared_cache_multiplier"]),
  decodeActiveRequestWeight: num(c["decode_active_request_weight"]),
  routerTemperature: num(c["router_temperature"]),
  workerType: typeof c["worker_type"] === "string" ? (c["worker_type"] as string) : undefined
})

const pair = (x: unknown): readonly [number, number] | undefined =>
  Array.isArray(x) ? [x[0] as number, x[1] as number] : undefined

const toRequest = (r: Obj): Dynamo.DynamoRequest => {
  const o = r["router_config_override"] as Obj | undefined
  return {
    islTokens: num(r["isl_tokens"]) ?? 0,
    blockSize: num(r["block_size"]) ?? 16,
    trackPrefillTokens:
      typeof r["track_prefill_tokens"] === "boolean" ? r["track_prefill_tokens"] : undefined,
    sharedCacheHits: r["shared_cache_hits"] as ReadonlyArray<readonly [number, number]> | undefined,
    routerConfigOverride:
      o === undefined
        ? undefined
        : {
            overlapScoreCredit: num(o["overlap_score_credit"]),
            prefillLoadScale: num(o["prefill_load_scale"]),
            sharedCacheMultiplier: num(o["shared_cache_multiplier"]),
            routerTemperature: num(o["router_temperature"])
          },
    preferredWorker: pair(r["preferred_worker"]),
    pinnedWorker: pair(r["pinned_worker"]),
    allowedWorkerIds: r["allowed_worker_ids"] as ReadonlyArray<number> | undefined
  }
}

const runDefault = (c: PeerCase): string | undefined => {
  const healthy = c.workers.filter((w) => w["healthy"] !== false)
  const ws = healthy.map(toWorker)
  const config = toConfig(c.config)
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    const e = st["expect"] as Obj
    if (st.op !== "route") return `step ${k}: op ${st.op} not in the default-selector format`
    const r = Dynamo.selectDefaultWorker(
      ws,
      toRequest(st["request"] as Obj),
      config,
      (st["random"] ?? []) as number[]
    )
    let actual: Obj
    if (r._tag === "DynamoSelectError") actual = { error: r.reason }
    else {
      const scores: Obj = {}
      for (const x of r.costs) scores[healthy[x.index]!.id] = x.cost
      actual = { worker: healthy[r.index]!.id, scores }
      if (r.probabilities !== undefined) {
        const p: Obj = {}
        r.costs.forEach((x, i) => {
          p[healthy[x.index]!.id] = r.probabilities![i]
        })
        actual["probabilities"] = p
      }
    }
    const { probabilities, ...rest } = e
    const { probabilities: ap, ...arest } = actual
    const d =
      firstDiff(rest, arest, `step ${k}`) ??
      (probabilities === undefined
        ? undefined
        : firstDiff(probabilities, ap, `step ${k}.probabilities`, 1e-12))
    if (d !== undefined) return d
  }
  return undefined
}

const runSoftmax = (c: PeerCase): string | undefined => {
  const healthy = c.workers.filter((w) => w["healthy"] !== false)
  const costs = healthy.map((w) => w["cost"] as number)
  const t = num(c.config["router_temperature"]) ?? 0
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    const e = st["expect"] as Obj
    const u = (st["random"] as number[])[0]!
    const i = Dynamo.softmaxSampleIndex(costs, t, u)
    const p = Dynamo.softmaxProbabilities(costs, t)
    const probs: Obj = {}
    healthy.forEach((w, j) => {
      probs[w.id] = p[j]
    })
    const d =
      firstDiff(e["worker"], healthy[i]!.id, `step ${k}.worker`) ??
      firstDiff(e["probabilities"], probs, `step ${k}.probabilities`, 1e-12)
    if (d !== undefined) return d
  }
  return undefined
}

const runVllm = (c: PeerCase): string | undefined => {
  let s = Dynamo.vllmSelectorInit(num(c.config["vllm_dplb_waiting_weight"]) ?? 4)
  const byId = new Map<string, Obj>()
  for (const w of c.workers) {
    byId.set(w.id, { ...w })
    const l = w["load"] as Obj | undefined
    if (l !== undefined)
      s = Dynamo.vllmSetCounts(
        s,
        w["worker_id"] as number,
        w["dp_rank"] as number,
        l["waiting"] as number,
        l["running"] as number
      )
  }
  const key = (id: string): readonly [number, number] => {
    const w = byId.get(id)!
    return [w["worker_id"] as number, w["dp_rank"] as number]
  }
  const allScores = (): Obj => {
    const o: Obj = {}
    for (const w of c.workers) o[w.id] = Dynamo.vllmScore(s, ...key(w.id))
    return o
  }
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    const e = st["expect"] as Obj
    let actual: Obj
    if (st.op === "route") {
      const r = st["request"] as Obj
      const allowedIds = r["allowed_worker_ids"] as ReadonlyArray<number> | undefined
      const pinned = pair(r["pinned_worker"])
      const cands = c.workers.filter(
        (w) =>
          byId.get(w.id)!["healthy"] !== false &&
          (allowedIds === undefined || allowedIds.includes(w["worker_id"] as number))
      )
      if (pinned !== undefined) {
        if (allowedIds !== undefined && !allowedIds.includes(pinned[0]))
          actual = { error: "PinnedWorkerNotAllowed" }
        else {
          const w = c.workers.find((x) => x["worker_id"] === pinned[0] && x["dp_rank"] === pinned[1])
          actual = w === undefined ? { error: "NoEndpoints" } : { worker: w.id }
        }
      } else {
        const sel = Dynamo.vllmSelect(
          s,
          cands.map((w) => key(w.id))
        )
        if (sel === undefined) actual = { error: "NoEndpoints" }
        else {
          s = sel.state
          const scores: Obj = {}
          cands.forEach((w, i) => {
            scores[w.id] = sel.scores[i]
          })
          const w = cands[sel.index]!
          actual = { worker: w.id, scores, start_index_used: sel.startIndexUsed }
          if (st["admit"] === true) s = Dynamo.vllmHook(s, "admit", ...key(w.id))
        }
      }
      for (const kk of Object.keys(actual)) if (!(kk in e)) delete actual[kk]
    } else {
      if (st.op === "admit" || st.op === "running" || st.op === "finish")
        s = Dynamo.vllmHook(s, st.op, ...key(st["worker"] as string))
      else if (st.op === "forget") s = Dynamo.vllmForget(s, st["worker_id"] as number)
      else if (st.op === "update")
        for (const u of st["workers"] as ReadonlyArray<Obj>) {
          const l = u["load"] as Obj
          s = Dynamo.vllmSetCounts(
            s,
            ...key(u["id"] as string),
            l["waiting"] as number,
            l["running"] as number
          )
        }
      else return `step ${k}: unknown op ${st.op}`
      actual = { scores: allScores() }
    }
    const d = firstDiff(e, actual, `step ${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The Dynamo KV router vector format (`system: "dynamo"`): default selector, softmax sampling and
 * the vLLM-style selector, as specified in fixtures/reference/peers/README-dynamo.md.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peerDynamo } from "./peerDynamo.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/dynamo.json", "utf8"))
 * peerDynamo.name // => "loadledger-peer-policy-golden/dynamo"
 * peerDynamo.detect(doc) // => true
 * const results = peerDynamo.run(doc)
 * results.length // => 70
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peerDynamo: VectorFormat = {
  name: "loadledger-peer-policy-golden/dynamo",
  detect: (doc) => isPeerDoc(doc, "dynamo"),
  run: (doc) =>
    runCases(doc, (c) =>
      c.policy === "dynamo/default-selector"
        ? runDefault(c)
        : c.policy === "dynamo/softmax-sample"
          ? runSoftmax(c)
          : c.policy === "dynamo/vllm-selector"
            ? runVllm(c)
            : `unknown policy ${c.policy}`
    )
}
