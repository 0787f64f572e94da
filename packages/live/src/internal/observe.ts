/**
 * The one place rows reach `policy.observe`.
 *
 * The rows are @loadledger/schema's `RankLoad`, as decoded (absent fields absent). The ledger
 * contract (common brief) moves `Policy.observe` to that type; until the policies package has
 * landed it, its declared parameter is the older policies-local `RankLoad` with required fields, so
 * this is the single cast, to be deleted with the contract change. No field is defaulted here.
 */
import type { Policy } from "@loadledger/policies"
import type { RankLoad } from "@loadledger/schema"

type ObserveContract<S> = (state: S, loads: ReadonlyArray<RankLoad>, now: number) => S

export const observeRows = <S>(policy: Policy<S>, state: S, rows: ReadonlyArray<RankLoad>, now: number): S =>
  (policy.observe as unknown as ObserveContract<S>)(state, rows, now)
