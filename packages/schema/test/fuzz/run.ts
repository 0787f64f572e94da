/**
 * The fuzz suite of issue 11: every public decoder of @loadledger/schema on mutated real payloads
 * and hostile structures, counting throws, hangs (a call over `hangMs`), accepted negatives (a
 * success carrying a negative, NaN, ±Inf or above-2^53 number as a load) and leaked keys (a
 * prototype-member name or a function in a success value, or a ledger row key outside RankLoad).
 */
import { encode } from "@msgpack/msgpack"
import { makeRng, type Rng } from "../../../../test-support/rng.js"
import * as S from "../../src/index.js"
import { numberProblem } from "../../src/internal/numbers.js"
import { objectSeeds, textSeeds } from "./corpus.js"
import { hostileText, mutateText, mutateValue, protoNames } from "./mutate.js"

export interface FuzzReport {
  readonly inputs: number
  readonly throws: number
  readonly hangs: number
  readonly acceptedNegatives: number
  readonly leakedKeys: number
  readonly slowestMs: number
  readonly slowestDecoder: string
  readonly examples: ReadonlyArray<string>
}

type Outcome = { readonly _tag: "Success"; readonly success: unknown } | { readonly _tag: "Failure" }
interface Target {
  readonly name: string
  readonly input: (r: Rng) => unknown
  readonly run: (input: never) => Outcome | unknown
  /** How to judge a success: `ledger` rows, `records` of a schema, any `value`, or `none`. */
  readonly check: "ledger" | "report" | "value" | "none"
}

// every key of RankLoad, checked by the compiler both ways (a field added to RankLoad must be added here)
const rankLoadKeyRecord = {
  dpRank: true,
  worker: true,
  workerDpRank: true,
  timestamp: true,
  numRunningReqs: true,
  numWaitingReqs: true,
  numTotalTokens: true,
  kvCacheUsage: true,
  numUsedTokens: true,
  numWaitingUncachedTokens: true,
  numActiveTokens: true,
  numPendingTokens: true,
  numTokens: true,
  maxTotalNumTokens: true,
  maxRunningRequests: true,
  maxPrefillTokens: true,
  contextLen: true,
  tokenUsage: true,
  genThroughput: true,
  cacheHitRate: true,
  utilization: true,
  prefixCacheHitRate: true,
  avgPromptThroughputTokensPerSecond: true,
  avgGenerationThroughputTokensPerSecond: true,
  numPausedReqs: true,
  numRetractedReqs: true,
  numGrammarQueueReqs: true,
  numPreallocReadyReqs: true,
  numPreallocReadyTokens: true,
  numPrefillBootstrapQueueReqs: true,
  numPrefillInflightQueueReqs: true,
  numDecodePreallocQueueReqs: true,
  numDecodeTransferQueueReqs: true,
  numDecodeRetractedQueueReqs: true,
  kvAvailableTokens: true,
  kvEvictableTokens: true,
  preAllocatedUsage: true,
  tokenCapacity: true,
  numSwappedReqs: true,
  cpuKvCacheUsage: true,
  numPrefillQueueReqs: true,
  numDecodeQueueReqs: true,
  activeDecodeBlocks: true,
  activePrefillTokens: true,
  kvUsedBlocks: true,
  kvTotalBlocks: true,
  unknown: true
} satisfies Record<keyof S.RankLoad, true>
const rankLoadKeys: ReadonlySet<string> = new Set(Object.keys(rankLoadKeyRecord))
const opaque = new Set(["decodeMetricsWindows", "decodeMoments", "tsTic", "line"])
const proto = new Set(protoNames)

const text = (r: Rng): string =>
  r.int(10) === 0 ? hostileText(r) : mutateText(r, mutateText(r, r.pick(textSeeds)))
const bytes = (r: Rng): Uint8Array => {
  if (r.int(2) === 0) return new TextEncoder().encode(text(r))
  const v = mutateValue(r, r.pick(objectSeeds.loadStatTagged))
  try {
    const b = encode(r.int(2) === 0 ? v : [v, v])
    if (r.int(3) === 0 && b.length > 0) b[r.int(b.length)] = r.int(256)
    return b
  } catch {
    return new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff])
  }
}
const jsonSeeds: ReadonlyArray<unknown> = textSeeds.filter((t) => t.startsWith("{")).map((t) => JSON.parse(t))
const parsed = (r: Rng): unknown => {
  try {
    return JSON.parse(text(r))
  } catch {
    return mutateValue(r, r.pick(jsonSeeds))
  }
}
const value = (seeds: ReadonlyArray<unknown>) => (r: Rng) =>
  r.int(4) === 0 ? parsed(r) : mutateValue(r, r.pick(seeds))
const kinds: ReadonlyArray<S.LedgerKind> = S.ledgerKinds
/** A decoder of values, fed mutated `seeds` (and now and then any parsed text); successes judged as values. */
const onSeeds = (name: string, seeds: ReadonlyArray<unknown>, run: (u: unknown) => unknown): Target => ({
  name,
  input: value(seeds),
  run,
  check: "value"
})

const targets: ReadonlyArray<Target> = [
  ...kinds.map(
    (k): Target => ({
      name: `decodeLedger(text, ${k})`,
      input: text,
      run: (t: string) => S.decodeLedger(t, k),
      check: "ledger"
    })
  ),
  { name: "decodeLedger(bytes)", input: bytes, run: (b: Uint8Array) => S.decodeLedger(b), check: "ledger" },
  { name: "decodeLedgerReport", input: text, run: (t: string) => S.decodeLedgerReport(t), check: "report" },
  { name: "decodeV1Loads", input: parsed, run: (u: unknown) => S.decodeV1Loads(u), check: "value" },
  { name: "decodeGetLoad", input: parsed, run: (u: unknown) => S.decodeGetLoad(u), check: "value" },
  onSeeds("loadStatFromTagged", objectSeeds.loadStatTagged, (u) => S.loadStatFromTagged(u)),
  {
    name: "decodeLoadStatPayload",
    input: bytes,
    run: (b: Uint8Array) => S.decodeLoadStatPayload(b),
    check: "value"
  },
  onSeeds("decodeEngineCounts", objectSeeds.engineCounts, (u) => S.decodeEngineCounts(u)),
  onSeeds("decodeCoordinatorUpdate", objectSeeds.coordinatorUpdate, (u) => S.decodeCoordinatorUpdate(u)),
  onSeeds("decodeSchedulerStats", objectSeeds.schedulerStats, (u) => S.decodeSchedulerStats(u)),
  onSeeds("decodeMlpSyncRows", objectSeeds.mlpSyncRows, (u) => S.decodeMlpSyncRows(u)),
  ...(["shm-v1", "shm-v2", "shm-v3"] as const).map((era) =>
    onSeeds(`decodeLoadSnapshot(${era})`, objectSeeds.loadSnapshot, (u) => S.decodeLoadSnapshot(era)(u))
  ),
  { name: "decodeVllmMetrics", input: text, run: (t: string) => S.decodeVllmMetrics(t), check: "value" },
  { name: "decodeSglangMetrics", input: text, run: (t: string) => S.decodeSglangMetrics(t), check: "value" },
  {
    name: "decodeVllmLoggerLines",
    input: text,
    run: (t: string) => S.decodeVllmLoggerLines(t),
    check: "value"
  },
  { name: "detectMetricsRuntime", input: text, run: (t: string) => S.detectMetricsRuntime(t), check: "none" },
  { name: "detectV1LoadsEra", input: parsed, run: (u: unknown) => S.detectV1LoadsEra(u), check: "none" },
  {
    name: "isoToEpochSeconds",
    input: text,
    run: (t: string) => S.isoToEpochSeconds(t.slice(0, 40)),
    check: "none"
  }
] // prettier-ignore

/** Problems in a success value: `negative` (a bad number outside opaque keys) and `leak` (a prototype name or a function). */
const inspect = (v: unknown, rows: boolean): { negative: boolean; leak: boolean } => {
  let negative = false
  let leak = false
  const stack: Array<[unknown, number]> = [[v, 0]]
  let n = 0
  while (stack.length > 0 && n++ < 100_000) {
    const [x, depth] = stack.pop()!
    if (typeof x === "function") leak = true
    else if (typeof x === "number") negative ||= numberProblem(x) !== undefined
    else if (Array.isArray(x)) for (const y of x) stack.push([y, depth + 1])
    else if (typeof x === "object" && x !== null) {
      for (const k of Object.keys(x)) {
        if (proto.has(k)) leak = true
        if (rows && depth === 1 && !rankLoadKeys.has(k)) leak = true
        if (!opaque.has(k) && k !== "unknown") stack.push([(x as Record<string, unknown>)[k], depth + 1])
      }
    }
  }
  return { negative, leak }
}

const confirmFast = (t: Target, input: unknown, hangMs: number): boolean => {
  const t0 = performance.now()
  try {
    t.run(input as never)
  } catch {
    return false
  }
  return performance.now() - t0 <= hangMs
}

const show = (u: unknown): string => {
  try {
    return String(JSON.stringify(u) ?? u)
  } catch {
    return "(a cyclic or too deep value)"
  }
}

/** Run `count` inputs round-robin over every target, from `seed`. */
export const runFuzz = (options: {
  readonly count: number
  readonly seed: number
  readonly hangMs?: number
  readonly onProgress?: (done: number) => void
}): FuzzReport => {
  const r = makeRng(options.seed)
  const hangMs = options.hangMs ?? 250
  let throws = 0
  let hangs = 0
  let acceptedNegatives = 0
  let leakedKeys = 0
  let slowestMs = 0
  let slowestDecoder = ""
  const examples: Array<string> = []
  const perTarget = new Map<string, number>()
  const note = (what: string, t: Target, input: unknown) => {
    const shown = ArrayBuffer.isView(input)
      ? `bytes ${Buffer.from(input as Uint8Array).toString("hex")}`
      : show(input)
    if (examples.length < 10) examples.push(`${what} in ${t.name}: ${shown.slice(0, 600)}`)
  }
  for (let i = 0; i < options.count; i++) {
    if (options.onProgress !== undefined && i > 0 && i % 100_000 === 0) options.onProgress(i)
    const t = targets[i % targets.length]!
    const input = t.input(r)
    const t0 = performance.now()
    let out: unknown
    try {
      out = t.run(input as never)
    } catch (e) {
      throws++
      note(`throw ${e instanceof Error ? e.message : String(e)}`, t, input)
      continue
    }
    const ms = performance.now() - t0
    perTarget.set(t.name, (perTarget.get(t.name) ?? 0) + ms)
    if (ms > slowestMs) {
      slowestMs = ms
      slowestDecoder = t.name
    }
    // a slow call on a shared machine may be a GC pause or the scheduler: a hang is slow twice
    if (ms > hangMs && !confirmFast(t, input, hangMs)) {
      hangs++
      note(`hang ${ms.toFixed(0)} ms`, t, input)
    }
    if (t.check === "none" || (out as Outcome)._tag !== "Success") continue
    const success = (out as { success: unknown }).success
    const target = t.check === "report" ? (success as { rows: unknown }).rows : success
    const { negative, leak } = inspect(target, t.check === "ledger" || t.check === "report")
    if (t.check === "report" && inspect((success as { notices: unknown }).notices, false).leak) leakedKeys++
    if (negative) {
      acceptedNegatives++
      note("accepted negative", t, input)
    }
    if (leak) {
      leakedKeys++
      note("leaked key", t, input)
    }
  }
  return {
    inputs: options.count,
    throws,
    hangs,
    acceptedNegatives,
    leakedKeys,
    slowestMs,
    slowestDecoder,
    examples
  }
}

/** The names of the decoders the suite drives. */
export const fuzzTargets: ReadonlyArray<string> = targets.map((t) => t.name)
