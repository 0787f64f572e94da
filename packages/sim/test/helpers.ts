import type { Policy } from "@loadledger/policies"
import type { SimPolicy, StepModel, TraceRequest } from "../src/index.js"

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
