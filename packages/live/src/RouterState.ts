/**
 * The router value's shapes: its options (`RouterOptions`), where an admitted request is
 * (`Placement`) and the value itself (`RouterState`). A leaf module below `Router.ts`, `Route.ts`
 * and the live shell, so they share these types without an import circle; `Router.ts` re-exports
 * them.
 *
 * @since 0.1.0
 */
import type { Policy } from "@loadledger/policies"
import type * as HashMap from "effect/HashMap"
import type { LastHeard } from "./LastHeard.js"
import type { PolicyView } from "./PolicyView.js"
import type { LoadField, RouterError, StatusOptions } from "./Types.js"

/**
 * How the router judges ranks. `staleAfterSeconds`: the staleness bound. `requiredFields`
 * (optional): fields every row must have to be known (a row missing one is
 * `unknown(missing-field)`); when given it applies to every worker. When absent, the partial-row
 * rule applies (see `StatusOptions`): a row with at least one load count (`numRunningReqs`,
 * `numWaitingReqs`, `numTotalTokens`) is known and reaches the policy with its other fields
 * absent, never 0; a row with none is `unknown(missing-field)`. What each worker's source publishes
 * (`sourcePublishedFields(kind)`) only names what a partial row lacks (`RankStatus.missing`).
 * `ageClock`: see `StatusOptions`. `clientCount` / `clientIndex`: how many router replicas share
 * these engines and which one this is (vLLM's front-end `client_count` / `client_index`); they
 * shape the in-flight fallback (see `route`). Pass the same numbers to the policy (the registry's
 * `make({ clientCount, clientIndex })`). `overloadBound` (optional, an integer >= 1): a rank
 * holding that many requests of this router in flight is over it and never chosen while another
 * usable rank is under it (the policy's choice is then replaced, `fallbackReason:
 * "overload-bound"`); when all are over, `route` answers the `RouterError` `Overloaded` (HTTP
 * 503 from the proxy).
 *
 * **Checked up front** (`makeRouter`, `startLiveRouter`): `staleAfterSeconds` a finite number of
 * seconds above 0; `requiredFields` absent or an array of `LoadField`s; `ageClock` absent,
 * `"publisher-change"` or `"receipt"`; `clientCount` absent or an integer >= 1 and `clientIndex`
 * absent or an integer in `0..clientCount-1` (the policies' `checkClientOptions`, the rule the
 * policy applies to the same numbers). A value outside these (`NaN`, `-1`, `Infinity`, `1.5`, an
 * index past the count, a missing `staleAfterSeconds`) is a `RouterError` `InvalidInput` naming it
 * (`options.clientCount` from `makeRouter`, `clientCount` from `startLiveRouter`), never read as
 * a default.
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterOptions {
  readonly staleAfterSeconds: number
  readonly requiredFields?: ReadonlyArray<LoadField> | undefined
  readonly ageClock?: StatusOptions["ageClock"] | undefined
  readonly clientCount?: number | undefined
  readonly clientIndex?: number | undefined
  readonly overloadBound?: number | undefined
}

/**
 * Where an admitted request is: its global rank and the view generation it was placed in.
 *
 * @category models
 * @since 0.2.0
 */
export interface Placement {
  readonly rank: number
  readonly generation: number
  /** The request's prompt length, to charge it again when the view is rebuilt. */
  readonly inputLength?: number | undefined
}

/**
 * The router value. `heard`: what was last heard per rank. `view`: the policy's state over the
 * usable ranks (see `PolicyView`). `inflight` maps each admitted, unfinished request id to its
 * placement (an effect persistent `HashMap`); `inflightPerRank` is its per-rank count; `decisions`
 * counts placements per rank. `error`: set when `makeRouter` refused its policy, a worker or an
 * option (see there); such a router has no ranks and every `route` answers this error.
 *
 * @category models
 * @since 0.1.0
 */
export interface RouterState<S> {
  readonly policy: Policy<S>
  readonly status: StatusOptions
  readonly heard: LastHeard
  readonly view: PolicyView<S>
  readonly inflight: HashMap.HashMap<string, Placement>
  readonly inflightPerRank: ReadonlyArray<number>
  readonly decisions: ReadonlyArray<number>
  readonly cursor: number
  readonly clientCount: number
  readonly overloadBound?: number | undefined
  readonly error?: RouterError | undefined
}
