/**
 * Streamed traces: `streamTrace` gives the requests `parseTrace` gives for a sorted file (the same
 * errors and line numbers across its 4,096-line blocks, a row out of order refused with its line),
 * and `simulate` on a stream gives the array path's result.
 */
import { readFileSync } from "node:fs"
import { findPolicy } from "@loadledger/policies"
import { gpus, models } from "@loadledger/step-time"
import { describe, expect, it } from "vitest"
import {
  isTraceError,
  kvPoolTokensFor,
  parseTrace,
  type SimConfig,
  scaleTrace,
  simulate,
  simulateAsync,
  stepModelFor,
  streamTrace,
  streamTraceFile,
  type TraceFormat,
  type TraceRequest,
  type TraceStream
} from "../src/index.js"
import { fixture } from "./helpers.js"

const azurePath = fixture("fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv").pathname
const mooncakePath = fixture("examples/traces/mooncake/conversation_trace.jsonl").pathname

const okStream = (s: TraceStream | ReturnType<typeof streamTrace>): TraceStream => {
  if (isTraceError(s)) throw new Error(`${s.line}: ${s.message}`)
  return s
}
const okArray = (r: ReturnType<typeof parseTrace>): ReadonlyArray<TraceRequest> => {
  if (isTraceError(r)) throw new Error(`${r.line}: ${r.message}`)
  return r
}
/** `text` cut into chunks of `size` characters (a chunk boundary anywhere in a line). */
const chunked = (text: string, size: number) => () => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

describe("streamTrace", () => {
  it("gives the same requests as parseTrace for the shipped Azure and Mooncake traces", () => {
    for (const path of [azurePath, mooncakePath]) {
      const text = readFileSync(path, "utf8")
      const s = okStream(streamTraceFile(path))
      const a = okArray(parseTrace(text))
      expect(s.count).toBe(a.length)
      expect(s.lastArrivalSeconds).toBe(a.at(-1)!.arrivalSeconds)
      expect([...s]).toEqual(a)
      // a second pass reads the file again, the same
      expect([...s].length).toBe(a.length)
    }
  })
  it("limit and rateScale as parseTrace's limit and scaleTrace", () => {
    const text = readFileSync(azurePath, "utf8")
    const s = okStream(streamTrace(chunked(text, 777), "azure", { limit: 5000, rateScale: 4 }))
    const a = scaleTrace(okArray(parseTrace(text, "azure", { limit: 5000 })), { rateScale: 4 })
    expect(s.count).toBe(5000)
    expect(s.lastArrivalSeconds).toBe(a.at(-1)!.arrivalSeconds)
    expect([...s]).toEqual(a)
  })
  const header = "arrival_seconds,input_length,output_length"
  const rows = (n: number) => Array.from({ length: n }, (_, i) => `${i},${10 + (i % 7)},${i % 5}`)
  for (const [format, make] of [
    ["generic-csv", (lines: Array<string>) => [header, ...lines].join("\n")],
    [
      "generic-jsonl",
      (lines: Array<string>) =>
        lines
          .map((l) => {
            const [t, i, o] = l.split(",")
            return i === "x"
              ? `{"arrival_seconds": ${t}, "input_length": "x", "output_length": ${o}}`
              : `{"arrival_seconds": ${t}, "input_length": ${i}, "output_length": ${o}}`
          })
          .join("\n")
    ]
  ] as const)
    it(`${format}: a bad row past the first blocks has parseTrace's error and line`, () => {
      const lines = rows(10_000)
      lines[9000] = "9000,x,1"
      const text = make(lines)
      const a = parseTrace(text, format as TraceFormat)
      const s = streamTrace(chunked(text, 4093), format as TraceFormat)
      expect(isTraceError(a) && a.line).toBe(format === "generic-csv" ? 9002 : 9001)
      expect(s).toEqual(a)
      // the same file without the bad row: the same 10,000 requests
      lines[9000] = "9000,11,1"
      const good = make(lines)
      expect([...okStream(streamTrace(chunked(good, 65_536)))]).toEqual(okArray(parseTrace(good)))
    })
  it("refuses a row earlier than the one before it, naming its line and time field", () => {
    const lines = rows(6000)
    lines[5000] = "3.5,10,1"
    const s = streamTrace(() => [[header, ...lines].join("\n")])
    expect(isTraceError(s) && [s.line, s.field]).toEqual([5002, "arrival_seconds"])
    expect(isTraceError(s) && s.message).toContain("a stream cannot be sorted")
    // parseTrace sorts the same file
    expect(isTraceError(parseTrace([header, ...lines].join("\n")))).toBe(false)
    // equal arrivals are in order
    expect(okStream(streamTrace(() => [`${header}\n1,10,1\n1,20,1\n`])).count).toBe(2)
  })
  it("a missing file, a directory and a bad option are TraceErrors", () => {
    expect(streamTraceFile("no/such.csv")).toMatchObject({
      field: "path",
      message: "trace file not found: no/such.csv"
    })
    expect(streamTraceFile(".")).toMatchObject({ field: "path", message: ". is a directory, not a file" })
    expect(streamTrace(() => [""], undefined, { limit: 0 })).toMatchObject({ field: "limit" })
    expect(streamTrace(() => [""], undefined, { rateScale: -1 })).toMatchObject({ field: "rateScale" })
  })
})

describe("simulate on a streamed trace", () => {
  const model = models["glm-5.3"]!
  const gpu = gpus.h200!
  const config: SimConfig = {
    dpSize: 4,
    stepModel: stepModelFor({ model, gpu }),
    kvPoolTokens: kvPoolTokensFor(model, gpu),
    slo: { ttftSeconds: 2, tpotSeconds: 0.1, attainment: 0.9, criterion: "joint" }
  }
  it("gives the array path's result on 3,000 Azure requests at 4x, to the last digit", () => {
    const s = okStream(streamTraceFile(azurePath, "azure", { limit: 3000, rateScale: 4 }))
    const a = [...s]
    const policy = findPolicy("total-tokens")!
    expect(JSON.stringify(simulate(config, s, policy))).toBe(JSON.stringify(simulate(config, a, policy)))
    const limited = { ...config, maxSimulatedSeconds: 60, recordRequests: true }
    expect(JSON.stringify(simulate(limited, s, policy))).toBe(JSON.stringify(simulate(limited, a, policy)))
  })
  const trace = [
    { requestId: "a", arrivalSeconds: 0, inputLength: 100, outputLength: 3 },
    { requestId: "b", arrivalSeconds: 1, inputLength: 0, outputLength: 3 }
  ]
  const policy = findPolicy("round-robin")!
  it("a request it cannot run is the array path's InvalidConfig, before the run", () => {
    const fromArray = simulate(config, trace, policy)
    const fromIterable = simulate(config, { [Symbol.iterator]: () => trace.values() }, policy)
    expect(fromArray.status).toMatchObject({ _tag: "InvalidConfig", field: "trace[1].inputLength" })
    expect(fromIterable).toEqual(fromArray)
  })
  it("refuses a one-shot iterator, and a stream that breaks its stated count", () => {
    const once = simulate(config, trace.slice(0, 1).values(), policy)
    expect(once.status).toMatchObject({ _tag: "InvalidConfig", field: "trace" })
    expect(once.status._tag === "InvalidConfig" && once.status.message).toContain("one-shot iterator")
    const good = trace.slice(0, 1)
    const wrong = { [Symbol.iterator]: () => good.values(), count: 2, lastArrivalSeconds: 0 }
    const r = simulate(config, wrong, policy)
    expect(r.status).toMatchObject({
      _tag: "InvalidConfig",
      field: "trace",
      message: "the trace holds 1 requests, its count states 2"
    })
  })
  const asAsync = (rs: ReadonlyArray<TraceRequest>, shape = true) => {
    const arriving = async function* () {
      for (const r of rs) yield r
    }
    return shape
      ? {
          [Symbol.asyncIterator]: arriving,
          count: rs.length,
          lastArrivalSeconds: rs.at(-1)?.arrivalSeconds ?? 0
        }
      : ({ [Symbol.asyncIterator]: arriving } as never)
  }
  it("simulateAsync: the array path's result across its 4,096-request blocks, instants split by a block's end", async () => {
    // groups of 7 requests share an instant: 4,096 falls inside a group
    const many = Array.from({ length: 9000 }, (_, i) => ({
      requestId: String(i),
      arrivalSeconds: Math.floor(i / 7) * 0.02,
      inputLength: 200 + ((i * 37) % 900),
      outputLength: 1 + ((i * 11) % 40)
    }))
    const p = findPolicy("total-tokens")!
    const limited = { ...config, maxSimulatedSeconds: 20 }
    for (const cfg of [config, limited])
      expect(JSON.stringify(await simulateAsync(cfg, asAsync(many), p))).toBe(
        JSON.stringify(simulate(cfg, many, p))
      )
  })
  it("simulateAsync refuses a trace without its shape, and a request out of arrival order", async () => {
    const none = await simulateAsync(config, asAsync(trace, false), policy)
    expect(none.status).toMatchObject({ _tag: "InvalidConfig", field: "trace" })
    const late = [
      { requestId: "a", arrivalSeconds: 2, inputLength: 100, outputLength: 3 },
      { requestId: "b", arrivalSeconds: 1, inputLength: 100, outputLength: 3 }
    ]
    const r = await simulateAsync(config, asAsync(late), policy)
    expect(r.status).toMatchObject({ _tag: "InvalidConfig", field: "trace[1].arrivalSeconds" })
  })
})
