/**
 * CPython's `random.Random(n).shuffle(xs)` for a non-negative integer seed `n` (MT19937 seeded by
 * `init_by_array` over the seed's 32-bit words, `shuffle` drawing `_randbelow(i + 1)` by rejection
 * over `getrandbits(k)`), as TensorRT-LLM's KV-cache-aware ADP router shuffles its eligible ranks
 * with `random.Random(req_id)`. Written from the Mersenne Twister paper's reference algorithm and
 * CPython's documented `Lib/random.py` behaviour (3.11+), not copied.
 */

const N = 624
const M = 397

const mul32 = (a: number, b: number): number => Math.imul(a, b) >>> 0

class Mt {
  private readonly mt = new Uint32Array(N)
  private mti = N + 1

  constructor(key: ReadonlyArray<number>) {
    this.initGenrand(19650218)
    let i = 1
    let j = 0
    const mt = this.mt
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30)
      mt[i] = ((mt[i]! ^ mul32(prev, 1664525)) + key[j]! + j) >>> 0
      i++
      j++
      if (i >= N) {
        mt[0] = mt[N - 1]!
        i = 1
      }
      if (j >= key.length) j = 0
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30)
      mt[i] = ((mt[i]! ^ mul32(prev, 1566083941)) - i) >>> 0
      i++
      if (i >= N) {
        mt[0] = mt[N - 1]!
        i = 1
      }
    }
    mt[0] = 0x80000000
  }

  private initGenrand(s: number): void {
    const mt = this.mt
    mt[0] = s >>> 0
    for (let i = 1; i < N; i++) mt[i] = (mul32(mt[i - 1]! ^ (mt[i - 1]! >>> 30), 1812433253) + i) >>> 0
    this.mti = N
  }

  uint32(): number {
    const mt = this.mt
    if (this.mti >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % N]! & 0x7fffffff)
        mt[k] = mt[(k + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)
      }
      this.mti = 0
    }
    let y = mt[this.mti++]!
    y ^= y >>> 11
    y ^= (y << 7) & 0x9d2c5680
    y ^= (y << 15) & 0xefc60000
    y ^= y >>> 18
    return y >>> 0
  }
}

/** The seed's 32-bit words, least significant first (CPython seeds with `abs(n)`; 0 is `[0]`). */
const seedWords = (n: number): Array<number> => {
  let v = Math.abs(Math.trunc(n))
  if (v === 0) return [0]
  const words: Array<number> = []
  while (v > 0) {
    words.push(v % 0x100000000)
    v = Math.floor(v / 0x100000000)
  }
  return words
}

const bitLength = (n: number): number => (n === 0 ? 0 : 32 - Math.clz32(n))

/** `random.Random(seed).shuffle(copy of xs)` for a safe-integer seed and fewer than 2^32 items. */
export const pyShuffle = <A>(xs: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...xs]
  const g = new Mt(seedWords(seed))
  for (let i = out.length - 1; i >= 1; i--) {
    const n = i + 1
    const k = bitLength(n)
    let r = g.uint32() >>> (32 - k)
    while (r >= n) r = g.uint32() >>> (32 - k)
    const t = out[i]!
    out[i] = out[r]!
    out[r] = t
  }
  return out
}

/** A request id as the integer seed upstream uses: the id itself when it is a decimal safe integer, else its FNV-1a 32-bit hash. */
export const seedOfId = (id: string | number): number => {
  if (typeof id === "number") return id
  if (/^\d{1,15}$/.test(id)) return Number(id)
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0
  return h
}
