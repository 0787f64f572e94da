/**
 * An immutable string-keyed map with structural sharing: a large `base` that is never mutated and a
 * small `overlay` copied on each write. When the overlay grows past `compactEvery`, both are merged
 * into a new base (amortised O(size / compactEvery) per write) and the oldest keys beyond `maxSize`
 * are dropped (insertion order).
 *
 * @internal
 */
export interface OverlayMap<V> {
  readonly base: ReadonlyMap<string, V>
  readonly overlay: ReadonlyMap<string, V>
  readonly maxSize: number
}

const compactEvery = 256

/** An empty map keeping at most `maxSize` keys. @internal */
export const emptyOverlay = <V>(maxSize: number): OverlayMap<V> => ({
  base: new Map(),
  overlay: new Map(),
  maxSize
})

/** Look a key up (overlay first). @internal */
export const getOverlay = <V>(m: OverlayMap<V>, key: string): V | undefined => {
  const v = m.overlay.get(key)
  return v !== undefined ? v : m.base.get(key)
}

/** A new map with the given entries set. @internal */
export const setOverlay = <V>(
  m: OverlayMap<V>,
  entries: ReadonlyArray<readonly [string, V]>
): OverlayMap<V> => {
  if (entries.length === 0) return m
  const overlay = new Map(m.overlay)
  for (const [k, v] of entries) {
    overlay.delete(k)
    overlay.set(k, v)
  }
  if (overlay.size < compactEvery) return { base: m.base, overlay, maxSize: m.maxSize }
  const merged = new Map(m.base)
  for (const [k, v] of overlay) {
    merged.delete(k)
    merged.set(k, v)
  }
  if (merged.size > m.maxSize) {
    let drop = merged.size - m.maxSize
    for (const k of merged.keys()) {
      if (drop-- <= 0) break
      merged.delete(k)
    }
  }
  return { base: merged, overlay: new Map(), maxSize: m.maxSize }
}
