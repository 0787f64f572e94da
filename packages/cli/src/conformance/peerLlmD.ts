/**
 * Replays fixtures/reference/peers/llm-d.json (llm-d Router scorers, pickers, detector, prefix
 * producer, in-flight producer) against `LlmD.runLlmdProfile`.
 *
 * @since 0.2.0
 */
import { LlmD } from "@loadledger/policies"
import { firstDiff } from "./diff.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type Obj = Record<string, unknown>
const num = (x: unknown): number | undefined => (typeof x === "number" ? x : undefined)

interface W {
  readonly id: string
  healthy: boolean
  load: Obj
  age: number | null | undefined
  requests: number
  tokens: number
}

const toConfig = (c: Obj): LlmD.LlmdProfileConfig => {
  const pp = c["prefix_producer"] as Obj | undefined
  return {
    scorers: (c["scorers"] as ReadonlyArray<Obj>).map((s) => ({
      type: s["type"] as LlmD.LlmdScorerType,
      weight: num(s["weight"]),
      params: s["params"] as Obj | undefined
    })),
    picker: c["picker"] as LlmD.LlmdProfileConfig["picker"],
    filters: (c["filters"] as ReadonlyArray<Obj> | undefined)?.map((f) => ({
      type: "utilization-detector" as const,
      params: (f["params"] ?? {}) as LlmD.LlmdDetectorConfig
    })),
    prefixProducer:
      pp === undefined
        ? undefined
        : {
            autoTune: typeof pp["autoTune"] === "boolean" ? pp["autoTune"] : undefined,
            blockSizeTokens: num(pp["blockSizeTokens"]),
            maxPrefixTokensToMatch: num(pp["maxPrefixTokensToMatch"]),
            maxPrefixBlocksToMatch: num(pp["maxPrefixBlocksToMatch"]),
            lruCapacityPerServer: num(pp["lruCapacityPerServer"])
          },
    model: c["model"] as string | undefined
  }
}

const endpoint = (w: W): LlmD.LlmdEndpoint => ({
  id: w.id,
  metrics: {
    waitingQueueSize: num(w.load["WaitingQueueSize"]),
    runningRequestsSize: num(w.load["RunningRequestsSize"]),
    kvCacheUsagePercent: num(w.load["KVCacheUsagePercent"]),
    cacheBlockSize: num(w.load["CacheBlockSize"]),
    cacheNumBlocks: num(w.load["CacheNumBlocks"])
  },
  inFlight: { requests: w.requests, tokens: w.tokens },
  uncachedRequestTokens: num(w.load["UncachedRequestTokens"]),
  metricsAgeMs: w.age
})

const setInFlight = (w: W, load: Obj) => {
  const f = load["InFlightLoad"] as Obj | undefined
  if (f !== undefined) {
    w.requests = num(f["Requests"]) ?? 0
    w.tokens = num(f["Tokens"]) ?? 0
  }
}

const runCase = (c: PeerCase): string | undefined => {
  const config = toConfig(c.config)
  const ws: Array<W> = c.workers.map((x) => {
    const w: W = {
      id: x.id,
      healthy: x["healthy"] !== false,
      load: (x["load"] ?? {}) as Obj,
      age: x["metrics_age_ms"] as number | null | undefined,
      requests: 0,
      tokens: 0
    }
    setInFlight(w, w.load)
    return w
  })
  const single = c.policy !== "llm-d/profile" && c.policy !== "llm-d/weighted-random-picker"
  let index = LlmD.llmdPrefixIndex()
  const routes: Array<{ id: string; tokens: number }> = []
  const inflight = (): Obj =>
    Object.fromEntries(ws.map((w) => [w.id, { Requests: w.requests, Tokens: w.tokens }]))
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    const e = (st["expect"] ?? {}) as Obj
    let actual: Obj
    if (st.op === "update") {
      for (const u of st["workers"] as ReadonlyArray<Obj>) {
        const w = ws.find((x) => x.id === u["id"])!
        if (typeof u["healthy"] === "boolean") w.healthy = u["healthy"]
        if ("metrics_age_ms" in u) w.age = u["metrics_age_ms"] as number | null
        if (u["load"] !== undefined) {
          w.load = u["load"] as Obj
          setInFlight(w, w.load)
        }
      }
      if (st["expect"] === undefined) continue
      actual = { inflight_after: inflight() }
    } else if (st.op === "finish") {
      const r = routes[st["request_index"] as number]!
      const w = ws.find((x) => x.id === r.id)!
      if (w.requests > 0) w.requests = Math.max(0, w.requests - 1)
      if (w.tokens > 0) w.tokens = Math.max(0, w.tokens - r.tokens)
      actual = { inflight_after: inflight() }
    } else if (st.op === "route") {
      const rq = st["request"] as Obj
      const ready = ws.filter((w) => w.healthy)
      const r = LlmD.runLlmdProfile(
        ready.map(endpoint),
        {
          tokenIds: rq["token_ids"] as ReadonlyArray<number> | undefined,
          text: rq["text"] as string | undefined,
          inputTokens: num(rq["input_tokens"]),
          model: rq["model"] as string | undefined,
          cacheSalt: rq["cache_salt"] as string | undefined
        },
        index,
        config,
        (st["random"] ?? []) as ReadonlyArray<number>
      )
      if (r === undefined) actual = { error: "NoCandidates" }
      else {
        index = r.prefixIndex
        const chosen = ready[r.index]!
        chosen.requests += 1
        chosen.tokens += r.tokensCharged
        routes.push({ id: chosen.id, tokens: r.tokensCharged })
        const ids = r.candidates.map((i) => ready[i]!.id)
        const byId = (xs: ReadonlyArray<number>): Obj => Object.fromEntries(xs.map((x, j) => [ids[j], x]))
        actual = {
          worker: chosen.id,
          scores: single ? byId(r.raw[0]!) : byId(r.totals),
          inflight_after: inflight()
        }
        if (!single)
          actual["per_scorer"] = Object.fromEntries(config.scorers.map((s, i) => [s.type, byId(r.raw[i]!)]))
        if (r.detection !== undefined) {
          actual["kept"] = r.detection.kept.map((i) => ready[i]!.id)
          actual["stale"] = r.detection.stale.map((i) => ready[i]!.id)
          actual["saturation"] = r.detection.saturation
        }
        if (r.prefix !== undefined) {
          actual["prefix_match_blocks"] = Object.fromEntries(
            r.prefix.matchBlocks.map((m, i) => [ready[i]!.id, m])
          )
          actual["prefix_total_blocks"] = r.prefix.hashes.length
          actual["block_size_tokens"] = r.prefix.blockSizeTokens
        }
      }
    } else return `step ${k}: unknown op ${st.op}`
    for (const key of Object.keys(actual))
      if (!(key in e) && key !== "worker" && key !== "error") delete actual[key]
    const d = firstDiff(e, actual, `step ${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The llm-d Router vector format (`system: "llm-d"`), as specified in
 * fixtures/reference/peers/README-llm-d.md.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peerLlmD } from "./peerLlmD.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/llm-d.json", "utf8"))
 * peerLlmD.name // => "loadledger-peer-policy-golden/llm-d"
 * peerLlmD.detect(doc) // => true
 * const results = peerLlmD.run(doc)
 * results.length // => 157
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peerLlmD: VectorFormat = {
  name: "loadledger-peer-policy-golden/llm-d",
  detect: (doc) => isPeerDoc(doc, "llm-d"),
  run: (doc) => runCases(doc, runCase)
}
