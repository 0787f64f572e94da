/**
 * The fault flags of `loadledger simulate` (issue 33): `--slow-rank R:SPEED[@FROM-TO]`,
 * `--slow-link R:SPEED[@FROM-TO]`, `--rank-overhead R:DURATION` (repeatable, each adds a
 * `RankFault`), the expert hot spot
 * `--expert-skew S[:SEED]` with its remedies `--enable-eplb` / `--ep-num-redundant-experts N`
 * and `--deepep-mode normal|low_latency|auto` (DeepEP's fixed-shape layout), and `--emit-loads FILE`.
 *
 * @since 0.6.0
 */
import { type RankFault, type StepModel, stepModelFor } from "@loadledger/sim"
import { expertRoutingFor, isExpertLoadError, type StepTimeConfig } from "@loadledger/step-time/core"
import type { Command } from "commander"
import { fail } from "../internal/args.js"

/**
 * The options these flags add, as parsed.
 *
 * @category simulate
 * @since 0.6.0
 */
export interface FaultFlagOptions {
  readonly slowRank?: ReadonlyArray<RankFault> | undefined
  readonly rankOverhead?: ReadonlyArray<RankFault> | undefined
  readonly slowLink?: ReadonlyArray<RankFault> | undefined
  readonly emitLoads?: string | undefined
  readonly expertSkew?: { readonly zipfS: number; readonly seed?: number | undefined } | undefined
  readonly enableEplb?: boolean | undefined
  readonly epNumRedundantExperts?: number | undefined
  readonly deepepMode?: "normal" | "low_latency" | "auto" | undefined
}

const RANK = /^(\d+):/

/**
 * Parse one `--slow-rank` value: `R:SPEED` (rank R's compute and HBM at SPEED of nominal, 0 <
 * SPEED <= 1) or `R:SPEED@FROM-TO` (only for the steps starting in that window of simulated
 * seconds). Throws an `Error` naming the flag on a bad value.
 *
 * @example
 * ```ts
 * import { parseSlowRank } from "./faultFlags.js"
 * parseSlowRank("3:0.7") // => { dpRank: 3, speed: 0.7 }
 * parseSlowRank("3:0.7@600-1200") // => { dpRank: 3, speed: 0.7, fromSeconds: 600, toSeconds: 1200 }
 * const bad = (() => { try { return parseSlowRank("3:1.7") } catch (e) { return (e as Error).message } })()
 * bad // => '--slow-rank must be RANK:SPEED[@FROM-TO] with 0 < SPEED <= 1 and FROM < TO (seconds), got "3:1.7"'
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const parseSlowRank = (v: string): RankFault => {
  const m = /^(\d+):([0-9.]+)(?:@([0-9.]+)-([0-9.]+))?$/.exec(v.trim())
  const speed = Number(m?.[2])
  const from = m?.[3] === undefined ? undefined : Number(m[3])
  const to = m?.[4] === undefined ? undefined : Number(m[4])
  if (m === null || !(speed > 0 && speed <= 1) || (from !== undefined && !(to! > from)))
    return fail(
      `--slow-rank must be RANK:SPEED[@FROM-TO] with 0 < SPEED <= 1 and FROM < TO (seconds), got "${v}"`
    )
  return { dpRank: Number(m[1]), speed, ...(from === undefined ? {} : { fromSeconds: from, toSeconds: to }) }
}

/**
 * Parse one `--slow-link` value: `R:SPEED[@FROM-TO]`, rank R's collectives at SPEED of the link's
 * nominal bandwidth (a degraded NVLink; `RankFault.linkSpeed`). Throws an `Error` naming the flag.
 *
 * @example
 * ```ts
 * import { parseSlowLink } from "./faultFlags.js"
 * parseSlowLink("2:0.25") // => { dpRank: 2, linkSpeed: 0.25 }
 * parseSlowLink("2:0.5@10-20") // => { dpRank: 2, linkSpeed: 0.5, fromSeconds: 10, toSeconds: 20 }
 * ```
 *
 * @category simulate
 * @since 0.7.0
 */
export const parseSlowLink = (v: string): RankFault => {
  let f: RankFault
  try {
    f = parseSlowRank(v)
  } catch {
    return fail(
      `--slow-link must be RANK:SPEED[@FROM-TO] with 0 < SPEED <= 1 and FROM < TO (seconds), got "${v}"`
    )
  }
  const { dpRank, speed, ...window } = f
  return { dpRank, linkSpeed: speed, ...window }
}

/**
 * Parse one `--rank-overhead` value: `R:DURATION`, the CPU time added to each step of rank R, in
 * `ms`, `us` or `s` (a bare number is seconds). Throws an `Error` naming the flag on a bad value.
 *
 * @example
 * ```ts
 * import { parseRankOverhead } from "./faultFlags.js"
 * parseRankOverhead("3:2ms") // => { dpRank: 3, overheadSeconds: 0.002 }
 * parseRankOverhead("0:500us").overheadSeconds // => 0.0005
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const parseRankOverhead = (v: string): RankFault => {
  const rank = RANK.exec(v.trim())
  const m = /^([0-9.]+)(ms|us|s)?$/.exec(v.trim().slice(rank?.[0].length ?? 0))
  const n = Number(m?.[1])
  if (rank === null || m === null || !Number.isFinite(n))
    return fail(`--rank-overhead must be RANK:DURATION (e.g. 3:2ms; ms, us or s), got "${v}"`)
  const unit = m[2] === "ms" ? 1e-3 : m[2] === "us" ? 1e-6 : 1
  return { dpRank: Number(rank[1]), overheadSeconds: n * unit }
}

/**
 * Parse one `--expert-skew` value: `S` (the Zipf exponent of the tokens' expert choices, >= 0) or
 * `S:SEED` (the seed of the shuffle that deals the popularity ranks to expert ids, default 1).
 * Throws an `Error` naming the flag on a bad value.
 *
 * @example
 * ```ts
 * import { parseExpertSkew } from "./faultFlags.js"
 * parseExpertSkew("1.2") // => { zipfS: 1.2 }
 * parseExpertSkew("0.8:7") // => { zipfS: 0.8, seed: 7 }
 * const bad = (() => { try { return parseExpertSkew("-1") } catch (e) { return (e as Error).message } })()
 * bad // => '--expert-skew must be S[:SEED] with the Zipf exponent S >= 0 and an integer SEED, got "-1"'
 * ```
 *
 * @category simulate
 * @since 0.7.0
 */
export const parseExpertSkew = (v: string): { readonly zipfS: number; readonly seed?: number } => {
  const m = /^([0-9.]+)(?::(\d+))?$/.exec(v.trim())
  const zipfS = Number(m?.[1])
  if (m === null || !Number.isFinite(zipfS))
    return fail(
      `--expert-skew must be S[:SEED] with the Zipf exponent S >= 0 and an integer SEED, got "${v}"`
    )
  return m[2] === undefined ? { zipfS } : { zipfS, seed: Number(m[2]) }
}

const redundant = (v: string): number => {
  const n = Number(v)
  if (!(Number.isSafeInteger(n) && n >= 0))
    return fail(`--ep-num-redundant-experts must be an integer >= 0, got "${v}"`)
  return n
}

const collect =
  (parse: (v: string) => RankFault) =>
  (v: string, previous: ReadonlyArray<RankFault> | undefined): ReadonlyArray<RankFault> => [
    ...(previous ?? []),
    parse(v)
  ]

const deepepMode = (v: string): "normal" | "low_latency" | "auto" =>
  v === "normal" || v === "low_latency" || v === "auto"
    ? v
    : fail(`--deepep-mode must be normal, low_latency or auto, got "${v}"`)

/**
 * Add `--slow-rank`, `--rank-overhead` and `--emit-loads` to a command.
 *
 * @example
 * ```ts
 * import { Command } from "commander"
 * import { addFaultFlags } from "./faultFlags.js"
 * const c = addFaultFlags(new Command("simulate")).exitOverride()
 * c.parse(["--slow-rank", "3:0.7", "--slow-rank", "5:0.9", "--rank-overhead", "1:2ms"], { from: "user" })
 * c.opts().slowRank.length // => 2
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const addFaultFlags = (c: Command): Command =>
  c
    .option(
      "--slow-rank <rank:speed[@from-to]>",
      "a hardware-slow rank: its compute and HBM at SPEED of nominal, throughout or over FROM-TO simulated seconds (repeatable)",
      collect(parseSlowRank)
    )
    .option(
      "--slow-link <rank:speed[@from-to]>",
      "a slow link: one rank's collectives at SPEED of the link's bandwidth, throughout or over FROM-TO (repeatable)",
      collect(parseSlowLink)
    )
    .option(
      "--rank-overhead <rank:duration>",
      "a per-step CPU overhead on one rank, e.g. 3:2ms (repeatable)",
      collect(parseRankOverhead)
    )
    .option(
      "--expert-skew <s[:seed]>",
      "an expert hot spot: the tokens' expert choices Zipf-distributed with exponent S (MoE models; the hottest EP rank's MoE GEMMs set the step)",
      parseExpertSkew
    )
    .option("--enable-eplb", "the remedy: EPLB's rebalanced expert placement (with --expert-skew)")
    .option(
      "--ep-num-redundant-experts <n>",
      "EPLB's redundant expert slots (implies --enable-eplb; SGLang's flag of that name)",
      redundant
    )
    .option(
      "--deepep-mode <mode>",
      "DeepEP's MoE exchange (SGLang's flag): normal, low_latency (fixed-shape buffer: the step does not move with the expert skew) or auto (low_latency for decode-only steps)",
      deepepMode
    )
    .option(
      "--emit-loads <file>",
      "write the per-rank load reports the engine would have published (SGLang /v1/loads JSON lines, one per second)"
    )

/**
 * The simulator fields these flags set: the faults, the step log `--emit-loads` reads, and with
 * `--expert-skew` the step model of `step` (the run's model and GPU) charged with that routing
 * (and EPLB's placement with `--enable-eplb` / `--ep-num-redundant-experts`). Throws an `Error`
 * naming the flag on a skew the model cannot take (a dense model; redundant slots that do not
 * divide over its EP ranks) or an EPLB flag without a skew.
 *
 * @example
 * ```ts
 * import { gpus, models } from "@loadledger/step-time"
 * import { faultConfig } from "./faultFlags.js"
 * faultConfig({ slowRank: [{ dpRank: 3, speed: 0.7 }], emitLoads: "loads.jsonl" })
 * // => { rankFaults: [{ dpRank: 3, speed: 0.7 }], recordSteps: "loads" }
 * faultConfig({}) // => {}
 * const skewed = faultConfig({ expertSkew: { zipfS: 1.2 }, enableEplb: true }, { model: models["glm-5.3"]!, gpu: gpus["h200"]! })
 * typeof skewed.stepModel // => "function"
 * ```
 *
 * @category simulate
 * @since 0.6.0
 */
export const faultConfig = (
  o: FaultFlagOptions,
  step?: StepTimeConfig
): {
  readonly rankFaults?: ReadonlyArray<RankFault>
  readonly recordSteps?: "loads"
  readonly stepModel?: StepModel
} => {
  const rankFaults = [...(o.slowRank ?? []), ...(o.slowLink ?? []), ...(o.rankOverhead ?? [])]
  const eplb = o.enableEplb === true || o.epNumRedundantExperts !== undefined
  if (eplb && o.expertSkew === undefined)
    return fail("--enable-eplb and --ep-num-redundant-experts rebalance an expert skew: add --expert-skew S")
  let stepModel: StepModel | undefined
  const deepEp = o.deepepMode === undefined ? {} : { deepEp: { mode: o.deepepMode } }
  if (o.expertSkew !== undefined && step !== undefined) {
    const experts = expertRoutingFor(step.model, {
      ...o.expertSkew,
      ...(eplb ? { placement: "eplb" as const, numRedundantExperts: o.epNumRedundantExperts ?? 0 } : {})
    })
    if (isExpertLoadError(experts)) return fail(`--expert-skew on ${step.model.name}: ${experts.message}`)
    stepModel = stepModelFor({ ...step, experts, ...deepEp })
  } else if (o.deepepMode !== undefined && step !== undefined) {
    if (step.model.mlp.kind !== "moe")
      return fail(`--deepep-mode on ${step.model.name}: model.mlp must be an MoE layer`)
    stepModel = stepModelFor({ ...step, ...deepEp })
  }
  return {
    ...(rankFaults.length > 0 ? { rankFaults } : {}),
    ...(o.emitLoads !== undefined ? { recordSteps: "loads" as const } : {}),
    ...(stepModel === undefined ? {} : { stepModel })
  }
}
