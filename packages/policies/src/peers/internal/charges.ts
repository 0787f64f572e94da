/** Shared adapter bookkeeping: which rank each routed request was charged to (released on finish). */
export type Charges = ReadonlyMap<string, number>

export const charge = (c: Charges, requestId: string, rank: number): Charges => {
  const m = new Map(c)
  m.set(requestId, rank)
  return m
}

/** Release `ids`; returns the next charges and the ranks released (one entry per released request). */
export const release = (c: Charges, ids: ReadonlyArray<string>): readonly [Charges, Array<number>] => {
  const ranks: Array<number> = []
  let m: Map<string, number> | undefined
  for (const id of ids) {
    const r = (m ?? c).get(id)
    if (r === undefined) continue
    m ??= new Map(c)
    m.delete(id)
    ranks.push(r)
  }
  return [m ?? c, ranks]
}
