/**
 * Shared adapter bookkeeping: which rank each routed request was charged to (released on finish).
 * A persistent hash map (effect's `HashMap`, a HAMT): charge and release are O(log n) and never copy
 * the other in-flight entries, so states stay immutable at router rates.
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"

export type Charges = HashMap.HashMap<string, number>

export const noCharges: Charges = HashMap.empty<string, number>()

export const charge = (c: Charges, requestId: string, rank: number): Charges =>
  HashMap.set(c, requestId, rank)

/** Release `ids`; returns the next charges and the ranks released (one entry per released request). */
export const release = (c: Charges, ids: ReadonlyArray<string>): readonly [Charges, Array<number>] => {
  const ranks: Array<number> = []
  let m = c
  for (const id of ids) {
    const r = HashMap.get(m, id)
    if (Option.isNone(r)) continue
    m = HashMap.remove(m, id)
    ranks.push(r.value)
  }
  return [m, ranks]
}
