import type { Policy } from "@loadledger/policies"
import type { PolicyResult, SimPolicy, StepModel, TraceRequest } from "../src/index.js"

/** A step model with a fixed duration per step (tests only). Imbalance = max/mean tokens. */
export const fixedStep =
  (seconds: number): StepModel =>
  (ranks) => {
    const tokens = ranks.map((r) => r.tokens)
    const mean = tokens.reduce((a, b) => a + b, 0) / tokens.length
    return {
      stepSeconds: seconds,
      tokenImbalanceRatio: mean > 0 ? Math.max(...tokens) / mean : 1,
      ranks: ranks.map(() => ({ syncWaitSeconds: 0 }))
    }
  }

export const asSimPolicy = <S>(p: Policy<S>): SimPolicy => ({
  name: p.name,
  make: () => p as Policy<unknown>
})

export const req = (
  id: number,
  arrivalSeconds: number,
  inputLength: number,
  outputLength: number,
  extra: Partial<TraceRequest> = {}
): TraceRequest => ({ requestId: String(id), arrivalSeconds, inputLength, outputLength, ...extra })

export const fixture = (path: string): URL => new URL(`../../../${path}`, import.meta.url)

/**
 * `result` with its latency curves on the percentile grid only (0, 0.01, ..., 1): the curves
 * gained p99.1..p99.9 after the golden and recorded digests were taken, and with those points left
 * out every result hashes to the digest before.
 */
export const onPercentileGrid = <R extends { readonly latencyCdf: PolicyResult["latencyCdf"] }>(
  result: R
): R => {
  const cdf = result.latencyCdf
  const keep = cdf.quantiles.map((q) => Math.abs(q * 100 - Math.round(q * 100)) < 1e-9)
  const pick = (xs: ReadonlyArray<number> | undefined) =>
    xs === undefined || xs.length === 0 ? xs : xs.filter((_, i) => keep[i])
  return {
    ...result,
    latencyCdf: {
      ...cdf,
      quantiles: pick(cdf.quantiles),
      ttftSeconds: pick(cdf.ttftSeconds),
      e2eSeconds: pick(cdf.e2eSeconds),
      ...(cdf.itlSeconds === undefined ? {} : { itlSeconds: pick(cdf.itlSeconds) })
    }
  }
}
