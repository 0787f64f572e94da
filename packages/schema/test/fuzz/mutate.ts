/**
 * Mutations of real payloads and hostile structures: hostile numbers (-1, NaN, ±Inf, 2^53+1,
 * 1e309), names that are Object.prototype members, deep nesting, repeated slices, truncation.
 */
import type { Rng } from "../../../../test-support/rng.js"

export const protoNames = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype"]
const hostileNumbers = [
  "-1",
  "-0.5",
  "NaN",
  "+Inf",
  "-Inf",
  "Infinity",
  "1e309",
  "9007199254740993",
  "-9007199254740993",
  "1e300",
  "0x10",
  "-0"
]
const tokens = [
  ...hostileNumbers,
  ...protoNames,
  '"',
  "{",
  "[",
  "}",
  "]",
  ",",
  ":",
  "\n",
  "=",
  '{"__proto__":{"x":1}}',
  "# TYPE x gauge\n",
  "\\",
  "\u0000",
  "é",
  "%",
  "."
]
const NUM = /-?\d+(\.\d+)?([eE][+-]?\d+)?/g

/** One random text mutation of `s`. */
export const mutateText = (r: Rng, s: string): string => {
  const at = r.int(s.length + 1)
  switch (r.int(10)) {
    case 0: // flip a char
      return s.slice(0, at) + String.fromCharCode(r.int(128)) + s.slice(at + 1)
    case 1: // insert a token
      return s.slice(0, at) + r.pick(tokens) + s.slice(at)
    case 2: // delete a slice
      return s.slice(0, at) + s.slice(at + r.int(64))
    case 3: // truncate
      return s.slice(0, at)
    case 4: {
      // duplicate a slice (repeated series, repeated keys)
      const len = r.int(200)
      return s.slice(0, at + len) + s.slice(at, at + len) + s.slice(at + len)
    }
    case 5: {
      // replace one number by a hostile one
      const nums = [...s.matchAll(NUM)]
      if (nums.length === 0) return s
      const m = r.pick(nums)
      return s.slice(0, m.index) + r.pick(hostileNumbers) + s.slice(m.index! + m[0].length)
    }
    case 6: {
      // rename a metric, label or key to a prototype member
      const names = [...s.matchAll(/[a-z_]+:?[a-z_]+/g)]
      if (names.length === 0) return s
      const m = r.pick(names)
      return s.slice(0, m.index) + r.pick(protoNames) + s.slice(m.index! + m[0].length)
    }
    case 7: // a deep nest inside the text
      return s.slice(0, at) + "[".repeat(r.int(3) === 0 ? 20000 : 1 + r.int(600)) + s.slice(at)
    case 8: {
      // a line repeated many times (many ranks, many samples)
      const lines = s.split("\n")
      const line = r.pick(lines)
      return [...lines, ...Array.from({ length: r.int(50) }, () => line)].join("\n")
    }
    default: // a random byte string
      return Array.from({ length: r.int(40) }, () => String.fromCharCode(r.int(256))).join("")
  }
}

/** Hostile structures that are not mutations of a seed. */
export const hostileText = (r: Rng): string => {
  const n = 1 + r.int(20000)
  switch (r.int(8)) {
    case 0:
      return "[".repeat(n)
    case 1:
      return `${'{"loads":'.repeat(Math.min(n, 3000))}1`
    case 2:
      return `{"loads":[{"dp_rank":0,"decode_metrics_windows":${"[".repeat(r.int(600))}1${"]".repeat(r.int(600))}}]}`
    case 3:
      return `sglang:num_running_reqs{${Array.from({ length: r.int(300) }, (_, i) => `l${i}="${i}"`).join(",")}} 1`
    case 4:
      return `${r.pick(protoNames)}{${r.pick(protoNames)}="0",dp_rank="0"} ${r.pick(hostileNumbers)}`
    case 5:
      return `Engine ${"9".repeat(r.int(30))}: Avg prompt throughput: ${"9".repeat(r.int(400))}.0 tokens/s, Running: ${r.pick(hostileNumbers)} reqs`
    case 6:
      return `dp_rank=${r.int(10)} ${r.pick(protoNames).toLowerCase()}=${r.pick(["-1", "5", "99999999999999999999"])}`
    default:
      return `{"${r.pick(protoNames)}":1,"loads":[{"${r.pick(protoNames)}":{"num_running_reqs":5},"dp_rank":${r.pick(["0", "-1", "1.5", "1e400", "null"])}}]}`
  }
}

const hostileValues: ReadonlyArray<unknown> = [
  -1,
  -0.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53 + 2,
  1e300,
  null,
  "1",
  [],
  {}
]

/** A structural mutation of a JSON-like value: a hostile value, a prototype-named key, deep nesting or a cycle. */
export const mutateValue = (r: Rng, v: unknown): unknown => {
  const copy = structuredClone(v) as unknown
  const spots: Array<[Record<string | number, unknown>, string | number]> = []
  const stack: Array<unknown> = [copy]
  while (stack.length > 0 && spots.length < 500) {
    const x = stack.pop()
    if (Array.isArray(x))
      x.forEach((y, i) => {
        spots.push([x as unknown as Record<number, unknown>, i])
        stack.push(y)
      })
    else if (typeof x === "object" && x !== null)
      for (const k of Object.keys(x)) {
        spots.push([x as Record<string, unknown>, k])
        stack.push((x as Record<string, unknown>)[k])
      }
  }
  if (spots.length === 0) return r.pick(hostileValues)
  const [parent, key] = r.pick(spots)
  switch (r.int(5)) {
    case 0:
    case 1:
      parent[key] = r.pick(hostileValues)
      return copy
    case 2:
      if (!Array.isArray(parent))
        Object.defineProperty(parent, r.pick(protoNames), {
          value: parent[key],
          enumerable: true,
          configurable: true,
          writable: true
        })
      return copy
    case 3: {
      let deep: unknown = 1
      for (let i = 0; i < 1 + r.int(5000); i++) deep = [deep]
      parent[key] = deep
      return copy
    }
    default:
      parent[key] = parent // a cycle
      return copy
  }
}
