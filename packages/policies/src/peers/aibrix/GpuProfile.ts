/**
 * AIBrix's per-deployment GPU profiles (`ModelGPUProfile`): signature lookup, the pending load a
 * request adds, and the SLO rank the SLO queue orders by.
 *
 * @since 0.8.0
 */

/**
 * One AIBrix model-on-GPU profile (upstream JSON field names): `gpu` is the deployment it
 * describes; `indexes` the raw (not log2) `[output tokens, input tokens]` grid points, ascending;
 * `tputs` max requests/s, `e2e` / `ttft` / `tpot` mean seconds, each a table indexed
 * `[output index][input index]`; `slos` the targets in seconds (a field 0 or absent is unset).
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixGpuProfile {
  readonly gpu: string
  readonly indexes: ReadonlyArray<ReadonlyArray<number>>
  readonly tputs?: ReadonlyArray<ReadonlyArray<number>> | undefined
  readonly e2e?: ReadonlyArray<ReadonlyArray<number>> | undefined
  readonly ttft?: ReadonlyArray<ReadonlyArray<number>> | undefined
  readonly tpot?: ReadonlyArray<ReadonlyArray<number>> | undefined
  readonly slos?:
    | {
        readonly percentile?: number | undefined
        readonly e2e?: number | undefined
        readonly ttft?: number | undefined
        readonly tpat?: number | undefined
        readonly tpot?: number | undefined
      }
    | undefined
}

/**
 * A profile look-up that failed, with upstream's error text (`"slo failure request"` is
 * `cache.ErrorSLOFailureRequest`: the profile predicts no throughput for the request).
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixProfileError {
  readonly _tag: "AibrixProfileError"
  readonly error: string
}

const fail = (error: string): AibrixProfileError => ({ _tag: "AibrixProfileError", error })

/** Upstream's `SignatureTolerance`: a value between two grid points rounds to the nearer one. */
const tolerance = 0.5

/**
 * `ModelGPUProfile.GetSignature`: the grid cell of a request's features `[output tokens, input
 * tokens]`, compared in log2 (the indexes are log2'd on load): below the first point -> 0, above
 * the last -> last, an exact point -> it, else the nearer neighbour (the lower one when strictly
 * below the midpoint). A dimension with one point is 0. Errors: no features, a negative feature,
 * an empty index row, or fewer index rows than features (upstream panics there).
 *
 * Upstream: vllm-project/aibrix `pkg/cache/model_gpu_profile.go` (`Unmarshal`, `GetSignature`) at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const p = Aibrix.aibrixSimulatorProfile
 * Aibrix.aibrixProfileSignature(p, [0, 2049]) // => [0, 4]
 * Aibrix.aibrixProfileSignature(p, [64, 256]) // => [4, 1]
 * Aibrix.aibrixProfileSignature(p, [-1, 128]) // => { _tag: "AibrixProfileError", error: "feature value must be positive, got -1" }
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixProfileSignature = (
  profile: AibrixGpuProfile,
  features: ReadonlyArray<number>
): Array<number> | AibrixProfileError => {
  if (features.length === 0) return fail("missing values on getting profile signature")
  for (const f of features) if (f < 0) return fail(`feature value must be positive, got ${f}`)
  const out: Array<number> = []
  for (let i = 0; i < features.length; i++) {
    const row = profile.indexes[i]
    if (row === undefined) return fail("profile index size mismatch, fewer index rows than features")
    const idx = row.map((x) => Math.log2(x))
    const value = Math.log2(features[i]!)
    const size = idx.length
    if (size === 0) return fail("profile index size mismatch, at least 1")
    if (size === 1) {
      out.push(0)
      continue
    }
    if (value < idx[0]!) out.push(0)
    else if (value > idx[size - 1]!) out.push(size - 1)
    else {
      let left = 0
      let right = size - 1
      let found = -1
      while (left < right - 1) {
        const mid = Math.floor((left + right) / 2)
        if (value < idx[mid]!) right = mid
        else if (value > idx[mid]!) left = mid
        else {
          found = mid
          break
        }
      }
      if (found >= 0) out.push(found)
      else out.push(value < idx[left]! + (idx[right]! - idx[left]!) * tolerance ? left : right)
    }
  }
  return out
}

/** `getValue`: a table's cell, or upstream's out-of-bound error. */
const cell = (
  table: ReadonlyArray<ReadonlyArray<number>>,
  sig: ReadonlyArray<number>
): number | AibrixProfileError => {
  if (sig.length < 2) return fail(`too few signature dimensions: ${sig.join(" ")}`)
  const v = table[sig[0]!]?.[sig[1]!]
  return v === undefined ? fail(`signature out of bound: ${sig.join(" ")}`) : v
}

/**
 * A profile table's value at a signature (`ThroughputRPS`, `LatencySeconds`, `TTFTSeconds`,
 * `TPOTSeconds`): the error names the missing table (`profile has no throughput data`, ...) or the
 * out-of-bound signature.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixProfileValue(Aibrix.aibrixSimulatorProfile, "tputs", [7, 4]) // => 0
 * Aibrix.aibrixProfileValue(Aibrix.aibrixSimulatorProfile, "ttft", [0, 0]) // => { _tag: "AibrixProfileError", error: "profile has no TTFT data" }
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixProfileValue = (
  profile: AibrixGpuProfile,
  table: "tputs" | "e2e" | "ttft" | "tpot",
  sig: ReadonlyArray<number>
): number | AibrixProfileError => {
  const t = profile[table]
  if (t === undefined) {
    const what = { tputs: "throughput", e2e: "E2E latency", ttft: "TTFT", tpot: "TPOT" }[table]
    return fail(`profile has no ${what} data`)
  }
  return cell(t, sig)
}

/**
 * `PendingLoadProvider.GetConsumption`: the share of a pod's capacity one request takes, by
 * Little's law `1 / tput / e2e` at the request's signature (`tput` the profile's max RPS, `e2e`
 * its mean latency). A throughput error is returned as is; a latency error alone gives 0 and no
 * error (upstream returns `err1` when either look-up fails); throughput 0 is `slo failure request`.
 *
 * Upstream: vllm-project/aibrix `pkg/cache/pending_load_provider.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const p = Aibrix.aibrixSimulatorProfile
 * Aibrix.aibrixPendingConsumption(p, 1, 1) // => 0.16081658474871144
 * Aibrix.aibrixPendingConsumption(p, 512, 2048) // => { _tag: "AibrixProfileError", error: "slo failure request" }
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixPendingConsumption = (
  profile: AibrixGpuProfile,
  outputTokens: number,
  promptTokens: number
): number | AibrixProfileError => {
  const sig = aibrixProfileSignature(profile, [outputTokens, promptTokens])
  if (!Array.isArray(sig)) return sig
  const lambda = aibrixProfileValue(profile, "tputs", sig)
  const latency = aibrixProfileValue(profile, "e2e", sig)
  if (typeof lambda !== "number") return lambda
  if (typeof latency !== "number") return 0
  if (lambda === 0) return fail("slo failure request")
  return 1.0 / lambda / latency
}

/**
 * `SLOQueue.rank`: `elapsed + expected - target` seconds (above 0 = the profile expects an SLO
 * violation), the SLO picked in the order TPOT (expected = mean E2E, target = `tpot * outputTokens
 * + ttft`), TTFT (mean TTFT vs `ttft`), TPAT (mean E2E vs `tpat * (promptTokens + outputTokens)`),
 * E2E (mean E2E vs `e2e`); no SLO set is `no SLO available`.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/queue/slo_queue.go` (`rank`, `rankImpl*`) at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.aibrixSloRank(Aibrix.aibrixSimulatorProfile, 1, 1, 0) // => -4.90047124166158
 * Aibrix.aibrixSloRank({ ...Aibrix.aibrixSimulatorProfile, slos: {} }, 1, 1, 0) // => { _tag: "AibrixProfileError", error: "no SLO available" }
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixSloRank = (
  profile: AibrixGpuProfile,
  outputTokens: number,
  promptTokens: number,
  elapsedSeconds: number
): number | AibrixProfileError => {
  const sig = aibrixProfileSignature(profile, [outputTokens, promptTokens])
  if (!Array.isArray(sig)) return sig
  const s = profile.slos ?? {}
  const pos = (x: number | undefined): boolean => x !== undefined && x > 0
  let expected: number | AibrixProfileError
  let target: number
  if (pos(s.tpot)) {
    target = s.tpot! * outputTokens + (s.ttft ?? 0)
    expected = aibrixProfileValue(profile, "e2e", sig)
  } else if (pos(s.ttft)) {
    target = s.ttft!
    expected = aibrixProfileValue(profile, "ttft", sig)
  } else if (pos(s.tpat)) {
    target = s.tpat! * (promptTokens + outputTokens)
    expected = aibrixProfileValue(profile, "e2e", sig)
  } else if (pos(s.e2e)) {
    target = s.e2e!
    expected = aibrixProfileValue(profile, "e2e", sig)
  } else return fail("no SLO available")
  if (typeof expected !== "number") return expected
  return elapsedSeconds + expected - target
}
