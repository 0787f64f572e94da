/**
 * Dynamo KV router's default worker selector: the cost (`worker_logit`) and the pick
 * (`pick_default_worker` / `select_worker_with_policy`), exact to upstream on upstream-shaped inputs.
 *
 * @since 0.2.0
 */
import { type DrawSource, drawAt } from "../Draws.js"
import { softmaxProbabilities, softmaxSampleIndex } from "./SoftmaxSample.js"
import type {
  DynamoKvRouterConfig,
  DynamoOverlap,
  DynamoRequest,
  DynamoSelectError,
  DynamoSelection,
  DynamoWorker
} from "./Types.js"

interface Resolved {
  readonly credit: number
  readonly decay: number
  readonly scale: number
  readonly host: number
  readonly disk: number
  readonly shared: number
  readonly decodeReq: number
  readonly temperature: number
  readonly decodeWorker: boolean
}

const resolve = (c: DynamoKvRouterConfig, r: DynamoRequest): Resolved => {
  const o = r.routerConfigOverride
  return {
    credit: o?.overlapScoreCredit ?? c.overlapScoreCredit ?? 1.0,
    decay: c.overlapScoreCreditDecay ?? 0.0,
    scale: o?.prefillLoadScale ?? c.prefillLoadScale ?? 1.0,
    host: c.hostCacheHitWeight ?? 0.75,
    disk: c.diskCacheHitWeight ?? 0.25,
    shared: o?.sharedCacheMultiplier ?? c.sharedCacheMultiplier ?? 0.0,
    decodeReq: c.decodeActiveRequestWeight ?? 0.0,
    temperature: o?.routerTemperature ?? c.routerTemperature ?? 0.0,
    decodeWorker: c.workerType === "decode"
  }
}

const hasTierEntry = (o: DynamoOverlap | undefined): boolean =>
  o !== undefined &&
  (o.deviceBlocks !== undefined || o.hostPinnedBlocks !== undefined || o.diskBlocks !== undefined)

const sharedBeyond = (
  ranges: ReadonlyArray<readonly [number, number]> | undefined,
  device: number
): number => {
  if (ranges === undefined) return 0
  const k = Math.round(Math.max(device, 0))
  let n = 0
  for (const [start, end] of ranges) n += Math.max(0, end - Math.max(start, k))
  return n
}

const logit = (
  w: DynamoWorker,
  r: DynamoRequest,
  c: Resolved,
  hasTier: boolean,
  minApt: number,
  withTaint: boolean
): number => {
  const track = r.trackPrefillTokens ?? true
  const o = w.overlap
  const device = o?.deviceBlocks ?? (hasTier ? 0.0 : (o?.effectiveOverlapBlocks ?? 0.0))
  const host = o?.hostPinnedBlocks ?? 0
  const disk = o?.diskBlocks ?? 0
  const sharedBey = sharedBeyond(r.sharedCacheHits, device)
  const bs = r.blockSize
  const isl = r.islTokens
  const apt = w.load?.activePrefillTokens ?? 0
  let d = 1.0
  if (track && c.decay > 0) {
    const reqBlocks = Math.ceil(isl / bs)
    d = 1 / (1 + c.decay * (Math.max(apt - minApt, 0) / bs / reqBlocks))
  }
  const credit = c.credit * d * device + c.host * host + c.disk * disk + c.shared * sharedBey
  const load = w.load
  const decode = load === undefined ? 0 : load.activeDecodeBlocks + load.additionalActiveBlocks
  const arc = c.decodeReq * (load?.activeRequests ?? 0)
  let x: number
  if (c.decodeWorker && !track && c.credit > 0) x = Math.max(decode - credit, 0) + arc
  else {
    const cached = o?.effectiveCachedTokens ?? 0
    const raw = !track ? 0 : load !== undefined ? apt + (isl - Math.min(cached, isl)) + cached : isl
    x = c.scale * Math.max(raw / bs - credit, 0) + decode + arc
  }
  return withTaint && w.preferredTaintMultiplier !== undefined ? x * w.preferredTaintMultiplier : x
}

const err = (reason: DynamoSelectError["reason"], message: string): DynamoSelectError => ({
  _tag: "DynamoSelectError",
  reason,
  message
})

/**
 * Dynamo's `worker_logit` for each of `workers` (all of them, in the order given), with the
 * request-wide terms (tier presence; the minimum active prefill over the eligible workers when the
 * overlap credit decays) computed as upstream.
 *
 * **When to use**: to read the cost Dynamo would give each worker without picking one.
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector/default.rs` (`worker_logit`)
 * at 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const w = {
 *   workerId: 0, dpRank: 0,
 *   load: { activePrefillTokens: 16, activeDecodeBlocks: 2, additionalActiveBlocks: 3, activeRequests: 0 },
 *   overlap: { effectiveCachedTokens: 96, deviceBlocks: 6 }
 * }
 * Dynamo.dynamoWorkerCosts([w], { islTokens: 64, blockSize: 16 }, { prefillLoadScale: 2 }) // => [7]
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const dynamoWorkerCosts = (
  workers: ReadonlyArray<DynamoWorker>,
  request: DynamoRequest,
  config: DynamoKvRouterConfig = {}
): Array<number> => {
  const c = resolve(config, request)
  const hasTier = workers.some((w) => hasTierEntry(w.overlap))
  const elig = eligible(workers, request)
  const minApt = minActivePrefill(workers, elig, request, c)
  return workers.map((w) => logit(w, request, c, hasTier, minApt, true))
}

const overloadedIds = (workers: ReadonlyArray<DynamoWorker>): Set<number> => {
  const s = new Set<number>()
  for (const w of workers) if (w.overloaded === true) s.add(w.workerId)
  return s
}

const allowed = (w: DynamoWorker, r: DynamoRequest): boolean =>
  r.allowedWorkerIds === undefined || r.allowedWorkerIds.includes(w.workerId)

const byKey = (workers: ReadonlyArray<DynamoWorker>) => (a: number, b: number) =>
  workers[a]!.workerId - workers[b]!.workerId || workers[a]!.dpRank - workers[b]!.dpRank

/** Indices of the eligible workers (allowed, not overloaded), ascending (workerId, dpRank). */
const eligible = (workers: ReadonlyArray<DynamoWorker>, r: DynamoRequest): Array<number> => {
  const over = overloadedIds(workers)
  const out: Array<number> = []
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i]!
    if (allowed(w, r) && !over.has(w.workerId)) out.push(i)
  }
  return out.sort(byKey(workers))
}

const minActivePrefill = (
  workers: ReadonlyArray<DynamoWorker>,
  elig: ReadonlyArray<number>,
  r: DynamoRequest,
  c: Resolved
): number => {
  if (!((r.trackPrefillTokens ?? true) && c.decay > 0)) return 0
  let m = Number.POSITIVE_INFINITY
  for (const i of elig) m = Math.min(m, workers[i]!.load?.activePrefillTokens ?? 0)
  return m === Number.POSITIVE_INFINITY ? 0 : m
}

const findKey = (workers: ReadonlyArray<DynamoWorker>, key: readonly [number, number]): number =>
  workers.findIndex((w) => w.workerId === key[0] && w.dpRank === key[1])

/**
 * Dynamo's default selector: pinned worker, then the eligible workers (allowed, not overloaded,
 * ascending `(workerId, dpRank)`), a preferred worker if eligible, then at temperature 0 the argmin
 * of the cost with a reservoir tie-break (one integer draw `0 <= r < ties` per equal-cost worker met
 * after the first; `r == 0` replaces the best), else a softmax sample with the uniform draw
 * `draws[0]`. `workers` are the workers in the router's map (healthy ones); their order does not
 * matter. Errors are values.
 *
 * **When to use**: replaying Dynamo's KV router decision on given loads and overlaps with explicit
 * draws (`fastrand` upstream).
 *
 * Upstream: ai-dynamo/dynamo `lib/kv-router/src/scheduling/selector/default.rs`
 * (`pick_default_worker`) and `selector/mod.rs` (`select_worker_with_policy`) at
 * 07a6c9ce3bb096cfaf353fe69ee578e105c6a512.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const ws = [{ workerId: 0, dpRank: 0, overlap: { effectiveOverlapBlocks: 4 } }, { workerId: 1, dpRank: 0 }]
 * const s = Dynamo.selectDefaultWorker(ws, { islTokens: 64, blockSize: 16 }, {}, [])
 * s._tag === "DynamoSelection" && s.index // => 0
 * s._tag === "DynamoSelection" && s.costs.map((c) => c.cost) // => [0, 4]
 * ```
 *
 * @category dynamo
 * @since 0.2.0
 */
export const selectDefaultWorker = (
  workers: ReadonlyArray<DynamoWorker>,
  request: DynamoRequest,
  config: DynamoKvRouterConfig,
  draws: DrawSource
): DynamoSelection | DynamoSelectError => {
  const c = resolve(config, request)
  const hasTier = workers.some((w) => hasTierEntry(w.overlap))
  const over = overloadedIds(workers)
  const elig = eligible(workers, request)
  const minApt = minActivePrefill(workers, elig, request, c)
  const one = (i: number, how: "pinned" | "preferred"): DynamoSelection => ({
    _tag: "DynamoSelection",
    index: i,
    costs: [{ index: i, cost: logit(workers[i]!, request, c, hasTier, minApt, false) }],
    how,
    drawsUsed: 0
  })
  if (request.pinnedWorker !== undefined) {
    const i = findKey(workers, request.pinnedWorker)
    if (request.allowedWorkerIds !== undefined && !request.allowedWorkerIds.includes(request.pinnedWorker[0]))
      return err("PinnedWorkerNotAllowed", `pinned worker ${request.pinnedWorker.join("/")} is not allowed`)
    if (i < 0) return err("NoEndpoints", `pinned worker ${request.pinnedWorker.join("/")} is unknown`)
    if (over.has(workers[i]!.workerId))
      return err("PinnedWorkerOverloaded", `pinned worker ${request.pinnedWorker.join("/")} is overloaded`)
    return one(i, "pinned")
  }
  if (request.preferredWorker !== undefined) {
    const i = findKey(workers, request.preferredWorker)
    if (i >= 0 && elig.includes(i)) return one(i, "preferred")
  }
  if (elig.length === 0) {
    const couldBe = workers.some((w) => allowed(w, request))
    return couldBe
      ? err("AllEligibleWorkersOverloaded", "every allowed worker is overloaded")
      : err("NoEndpoints", "no worker is allowed")
  }
  const costs = elig.map((i) => ({ index: i, cost: logit(workers[i]!, request, c, hasTier, minApt, true) }))
  if (c.temperature > 0) {
    const xs = costs.map((x) => x.cost)
    const k = softmaxSampleIndex(xs, c.temperature, drawAt(draws, 0, 0))
    return {
      _tag: "DynamoSelection",
      index: costs[k]!.index,
      costs,
      probabilities: softmaxProbabilities(xs, c.temperature),
      how: "softmax",
      drawsUsed: 1
    }
  }
  let best = -1
  let bestCost = Number.POSITIVE_INFINITY
  let ties = 0
  let used = 0
  for (const x of costs) {
    if (x.cost < bestCost) {
      best = x.index
      bestCost = x.cost
      ties = 1
    } else if (x.cost === bestCost) {
      ties += 1
      if (drawAt(draws, used++, ties) === 0) best = x.index
    }
  }
  return {
    _tag: "DynamoSelection",
    index: best < 0 ? costs[0]!.index : best,
    costs,
    how: "argmin",
    drawsUsed: used
  }
}
