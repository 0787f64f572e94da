/**
 * One SGLang scheduler batch line, `<lead>[<time> DP3 TP3 PP0 EP3] Decode batch [7], k: v, k: v, `:
 * where the batch word starts, the logger prefix's ranks, and the items (split on `, ` outside
 * a list value, so a `#running-req per DP: [2, 2]` list stays one item).
 * Format: sgl-project/sglang `python/sglang/srt/managers/scheduler_metrics_mixin.py` at commit
 * 01bb3c807f7e62c19a31de7548837505488c2b64; the prefix from the scheduler's `configure_logger`.
 */

const BATCH = /(Decode|Prefill) batch(?: \[(\d{1,12})\])?[.,](?: |$)/

/** Index and match of the batch word in `line`, when it has one. */
export const batchLineAt = (line: string): RegExpExecArray | undefined => {
  if (!line.includes(" batch")) return undefined
  return BATCH.exec(line) ?? undefined
}

/** Items whose value must be a number when present (the load counts). */
const numeric: ReadonlySet<string> = new Set([
  "#running-req",
  "#token",
  "token usage",
  "#queue-req",
  "#prealloc-req",
  "#transfer-req",
  "#retracted-req",
  "#inflight-req",
  "gen throughput (token/s)",
  "input throughput (token/s)",
  "pre-allocated usage",
  "#new-seq",
  "#new-token",
  "#cached-token"
])

const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^-?(?:inf|nan)$/

const itemValue = (v: string): number | boolean | string => {
  if (v === "True") return true
  if (v === "False") return false
  if (NUMBER.test(v)) return v.endsWith("inf") ? (v.startsWith("-") ? -Infinity : Infinity) : Number(v)
  return v
}

/** Split on `,` outside a `[...]` list value. */
const splitItems = (body: string): Array<string> => {
  const out: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i)
    // a list value (`key: [2, 2]`) opens right after `: `; any other bracket is text
    if (c === 91 && (depth > 0 || (i >= 2 && body.charCodeAt(i - 1) === 32 && body.charCodeAt(i - 2) === 58)))
      depth++
    else if (c === 93 && depth > 0) depth--
    else if (c === 44 && depth === 0) {
      out.push(body.slice(start, i))
      start = i + 1
    }
  }
  out.push(body.slice(start))
  return out.map((s) => s.trim()).filter((s) => s !== "")
}

const RANK = /^(DP|TP|PP|EP)(\d{1,9})$/

export interface BatchLine {
  readonly line: number
  readonly batch: "decode" | "prefill"
  readonly dpRank?: number | undefined
  readonly tpRank?: number | undefined
  readonly ppRank?: number | undefined
  readonly epRank?: number | undefined
  readonly time?: string | undefined
  readonly forwardIter?: number | undefined
  readonly items: ReadonlyArray<readonly [string, number | boolean | string]>
}

/** The line's record, or a message saying what is wrong with it. */
export const parseBatchLine = (raw: string, at: RegExpExecArray, line: number): BatchLine | string => {
  const rec: {
    -readonly [K in keyof BatchLine]: BatchLine[K]
  } = { line, batch: at[1] === "Decode" ? "decode" : "prefill", items: [] }
  if (at[2] !== undefined) rec.forwardIter = Number(at[2])
  // the logger prefix: the last `[...]` before the batch word, e.g. `[2026-05-27 20:14:38 DP3 TP3]`
  const lead = raw.slice(0, at.index).trimEnd()
  if (lead.endsWith("]")) {
    const open = lead.lastIndexOf("[")
    if (open >= 0) {
      const time: Array<string> = []
      for (const t of lead
        .slice(open + 1, -1)
        .trim()
        .split(/\s+/)) {
        const m = RANK.exec(t)
        if (m === null) {
          if (t !== "") time.push(t)
          continue
        }
        const n = Number(m[2])
        if (m[1] === "DP") rec.dpRank = n
        else if (m[1] === "TP") rec.tpRank = n
        else if (m[1] === "PP") rec.ppRank = n
        else rec.epRank = n
      }
      if (time.length > 0) rec.time = time.join(" ")
    }
  }
  const items: Array<readonly [string, number | boolean | string]> = []
  for (const item of splitItems(raw.slice(at.index + at[0].length))) {
    const colon = item.indexOf(": ")
    if (colon <= 0) return `item '${item}' of a ${rec.batch} batch line is not 'key: value'`
    const key = item.slice(0, colon).trim()
    const value = itemValue(item.slice(colon + 2).trim())
    if (numeric.has(key) && typeof value !== "number")
      return `${key}: '${item.slice(colon + 2).trim()}' is not a number (a ${rec.batch} batch line)`
    items.push([key, value])
  }
  rec.items = items
  return rec
}
