/**
 * The named terms an own policy's configuration weighs: the ledger terms (each a `Scorer` of
 * `Scorers` over the in-flight ledger's `ScoreView`) and the step-time terms of `step-time-aware`.
 *
 * @since 0.6.0
 */
import * as Scorers from "./Scorers.js"
import type { Scorer } from "./ScoreView.js"

/** The fields of a configured term a term's builder reads. */
interface TermFields {
  readonly kvFull?: number | undefined
  readonly kvRoom?: number | undefined
}

/**
 * The terms a `"scored"` or `"power-of-choices"` configuration may name, each a `Scorer` over the
 * in-flight ledger's `ScoreView` (units in each one's docstring in `Scorers`): `tokens` (tokens),
 * `requests`, `running`, `waiting` (requests), `kvCacheUsage` (0..1), `waitingUncachedTokens`,
 * `uncachedPromptTokens` (cached prefix: prompt tokens still to prefill), `loadTokens` (tokens with
 * the pending in-flight floor), `kvPressureGate` (a gate: 0 or `+Infinity`).
 *
 * @example
 * ```ts
 * import { ledgerTerms } from "@loadledger/policies"
 * Object.keys(ledgerTerms).length // => 9
 * ledgerTerms.tokens!({}).name // => "tokens"
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const ledgerTerms: Readonly<Record<string, (t: TermFields) => Scorer>> = {
  tokens: () => Scorers.tokens,
  requests: () => Scorers.requests,
  running: () => Scorers.running,
  waiting: () => Scorers.waiting,
  kvCacheUsage: () => Scorers.kvCacheUsage,
  waitingUncachedTokens: () => Scorers.waitingUncachedTokens,
  uncachedPromptTokens: () => Scorers.uncachedPromptTokens,
  loadTokens: () => Scorers.loadTokens,
  kvPressureGate: (t) => Scorers.kvPressureGate({ kvFull: t.kvFull, kvRoom: t.kvRoom })
}

/**
 * The terms of a `"step-time"` configuration, each in seconds of lockstep step time (see
 * `makeStepTimeAware`, "Explanation"), and the option its weight sets: `queuedPrefill` (the wait
 * before this prompt's prefill starts: this front end's prefill horizon or the snapshot's queue;
 * weight 1 only), `ownPrefill` (this prompt's prefill after its cached prefix; weight 1 only),
 * `decodeLoad` (`decodeWeight`: the rank's decode step cost after admission, in decode steps),
 * `slotWait` (`slotWaitSeconds`: seconds per request beyond the running-request cap), `homeCredit`
 * (`homeWeight`: the share of the own prefill its consistent-hash home is credited with).
 *
 * @example
 * ```ts
 * import { stepTimeTerms } from "@loadledger/policies"
 * stepTimeTerms.decodeLoad // => "decodeWeight"
 * ```
 *
 * @category own policies
 * @since 0.6.0
 */
export const stepTimeTerms: Readonly<Record<string, string | undefined>> = {
  queuedPrefill: undefined,
  ownPrefill: undefined,
  decodeLoad: "decodeWeight",
  slotWait: "slotWaitSeconds",
  homeCredit: "homeWeight"
}
