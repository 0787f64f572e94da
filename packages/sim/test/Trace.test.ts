import { readFileSync } from "node:fs"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  detectTraceFormat,
  isTraceError,
  parseTrace,
  scaleTrace,
  type TraceFormat,
  type TraceRequest
} from "../src/index.js"
import { fixture } from "./helpers.js"

const ok = (r: ReturnType<typeof parseTrace>): ReadonlyArray<TraceRequest> => {
  if (isTraceError(r)) throw new Error(`${r.line}: ${r.message}`)
  return r
}

describe("Mooncake JSONL", () => {
  const text = readFileSync(fixture("examples/traces/mooncake/conversation_trace.jsonl"), "utf8")
  it("reads the conversation trace: 12,031 requests over ~3,537 s (fixtures/traces/README.md)", () => {
    expect(detectTraceFormat(text)).toBe("mooncake")
    const t = ok(parseTrace(text))
    expect(t).toHaveLength(12031)
    expect(t[0]).toMatchObject({ arrivalSeconds: 0, inputLength: 6758, outputLength: 500 })
    expect(t[0]!.hashIds).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    expect(Math.round(t[t.length - 1]!.arrivalSeconds)).toBe(3537)
    const mean = t.reduce((a, r) => a + r.inputLength, 0) / t.length
    expect(Math.round(mean)).toBe(12035)
    for (const r of t) expect(r.hashIds!.length * 512).toBeGreaterThanOrEqual(r.inputLength)
  })
  it("reports a malformed row with its line number", () => {
    const bad =
      '{"timestamp": 0, "input_length": 10, "output_length": 1}\n{"timestamp": 5, "input_length": "x", "output_length": 1}\n'
    const r = parseTrace(bad)
    expect(isTraceError(r) && r.line === 2 && r.field === "input_length").toBe(true)
    const r2 = parseTrace('{"timestamp": 0, "input_length": 10, "output_length": 1}\n{oops\n')
    expect(isTraceError(r2) && r2.line === 2).toBe(true)
  })
})

describe("Azure CSV", () => {
  const text = readFileSync(fixture("fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv"), "utf8")
  it("reads 19,366 rows, times in seconds from the first row", () => {
    expect(detectTraceFormat(text)).toBe("azure")
    const t = ok(parseTrace(text))
    expect(t).toHaveLength(19366)
    expect(t[0]).toMatchObject({ arrivalSeconds: 0, inputLength: 374, outputLength: 44 })
    // 18:15:50.9951690 - 18:15:46.6805900
    expect(t[1]!.arrivalSeconds).toBeCloseTo(4.314579, 6)
    expect(t[1]).toMatchObject({ inputLength: 396, outputLength: 109 })
  })
  it("reads the 2024 week-long traces' timestamps (offset, microseconds), and rows in any order", () => {
    // AzureLLMInferenceTrace_{code,conv}_1week.csv (Azure/AzurePublicDataset, 2024): "+00:00" and 6 digits
    const h = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    const t = ok(
      parseTrace(
        `${h}2024-05-10 00:00:00.009930+00:00,2162,5\n2024-05-10 00:00:00.054757+00:00,3180,8\n2024-05-10 00:00:01+00:00,10,1\n`
      )
    )
    expect(t.map((r) => r.inputLength)).toEqual([2162, 3180, 10])
    expect(t[1]!.arrivalSeconds).toBeCloseTo(0.044827, 6)
    expect(t[2]!.arrivalSeconds).toBeCloseTo(0.99007, 6)
    // the same instants written with other offsets, "Z" or a "T" separator read the same
    const same = ok(
      parseTrace(
        `${h}2024-05-10T02:00:00.054757+02:00,3180,8\n2024-05-09 19:00:00.009930-0500,2162,5\n2024-05-10T00:00:01Z,10,1\n`
      )
    )
    expect(same.map((r) => [r.inputLength, Number(r.arrivalSeconds.toFixed(6))])).toEqual(
      t.map((r) => [r.inputLength, Number(r.arrivalSeconds.toFixed(6))])
    )
    const bad = parseTrace(`${h}2024-05-10 00:00:00.009930+0:00,2162,5\n`)
    expect(isTraceError(bad) && [bad.line, bad.field]).toEqual([2, "TIMESTAMP"])
  })
  it("reports a bad row with its line number (header = line 1)", () => {
    const r = parseTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.1,abc,44\n"
    )
    expect(isTraceError(r) && r.line === 3 && r.field === "ContextTokens").toBe(true)
    const r2 = parseTrace(
      'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n"unclosed,1,2\n'
    )
    expect(isTraceError(r2)).toBe(true)
  })
})

describe("BurstGPT CSV", () => {
  it("reads the published schema in any column order, failed requests kept with no output", () => {
    const text =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,0,1087,API log\n7.5,ChatGPT,20,3,23,Conversation log\n"
    expect(detectTraceFormat(text)).toBe("burstgpt")
    expect(ok(parseTrace(text)).map((r) => [r.arrivalSeconds, r.inputLength, r.outputLength])).toEqual([
      [0, 472, 18],
      [2.5, 20, 3],
      [40, 1087, 0]
    ])
    const reordered = ok(
      parseTrace(
        "Log Type,Timestamp,Request tokens,Response tokens,Total tokens,Model,SessionID\nAPI log,3,10,2,12,GPT-4,s1\n"
      )
    )
    expect(reordered[0]).toMatchObject({
      arrivalSeconds: 0,
      inputLength: 10,
      outputLength: 2,
      sessionId: "s1"
    })
    // a column missing is named on the header's line, not as a bad value on every row
    const noOutput = parseTrace("Timestamp,Model,Request tokens\n1,ChatGPT,5\n")
    expect(isTraceError(noOutput) && [noOutput.line, noOutput.field]).toEqual([1, "Response tokens"])
    const azureAsGeneric = parseTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n",
      "generic-csv"
    )
    expect(isTraceError(azureAsGeneric) && azureAsGeneric.message).toBe(
      "missing column arrival_seconds (header: TIMESTAMP,ContextTokens,GeneratedTokens)"
    )
    const bad = parseTrace("Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,x,2\n")
    expect(isTraceError(bad) && [bad.line, bad.field]).toEqual([2, "Request tokens"])
  })
})

describe("generic CSV / JSONL", () => {
  it("CSV with hash_ids, dp_rank and bootstrap_room", () => {
    const t = ok(
      parseTrace(
        "arrival_seconds,input_length,output_length,hash_ids,dp_rank,bootstrap_room\n0.5,1024,8,7 8,3,18446744073709551615\n0.25,10,1,,,\n"
      )
    )
    expect(t.map((r) => r.arrivalSeconds)).toEqual([0.25, 0.5])
    expect(t[1]).toMatchObject({
      requestId: "0",
      hashIds: [7, 8],
      dpRank: 3,
      bootstrapRoom: "18446744073709551615"
    })
    expect(t[0]!.hashIds).toBeUndefined()
  })
  it("token_ids: the prompt's leading token ids (u32), in JSONL and CSV; a bad one names token_ids and its line", () => {
    const j = ok(
      parseTrace(
        '{"arrival_seconds": 0, "input_length": 4, "output_length": 1, "token_ids": [0, 4294967295, 7]}\n'
      )
    )
    expect(j[0]!.tokenIds).toEqual([0, 4294967295, 7])
    const c = ok(parseTrace("arrival_seconds,input_length,output_length,token_ids\n0,3,1,5 6 7\n1,3,1,\n"))
    expect(c.map((r) => r.tokenIds)).toEqual([[5, 6, 7], undefined])
    // Mooncake's format has no token_ids key: it is not read there
    expect(
      ok(parseTrace('{"timestamp": 0, "input_length": 4, "output_length": 1, "token_ids": [1]}\n'))[0]!
        .tokenIds
    ).toBeUndefined()
    const bad = (text: string) => {
      const r = parseTrace(text)
      return isTraceError(r) ? [r.line, r.field, r.message] : r
    }
    const jsonl = (ids: string) =>
      `{"arrival_seconds": 0, "input_length": 2, "output_length": 1}\n{"arrival_seconds": 0, "input_length": 2, "output_length": 1, "token_ids": ${ids}}\n`
    for (const ids of ["[-1]", "[1.5]", "[4294967296]", '["1"]', '"1 2"', "null"])
      expect(bad(jsonl(ids))).toEqual([
        2,
        "token_ids",
        "token_ids must be token ids (integers 0..4294967295)"
      ])
    expect(bad(jsonl("[1, 2, 3]"))).toEqual([2, "token_ids", "token_ids has 3 ids, more than input_length 2"])
    for (const ids of ["-1", "1.5", "x", "4294967296"])
      expect(
        bad(`arrival_seconds,input_length,output_length,token_ids\n0,3,1,${ids}\n`)?.slice(0, 2)
      ).toEqual([2, "token_ids"])
  })
  it("JSONL keeps seconds as given", () => {
    const t = ok(
      parseTrace('{"arrival_seconds": 1.5, "input_length": 4, "output_length": 2, "dp_rank": 1}\n')
    )
    expect(t[0]).toMatchObject({ arrivalSeconds: 1.5, dpRank: 1 })
  })
  it("rejects a negative arrival with its line", () => {
    const r = parseTrace("arrival_seconds,input_length,output_length\n1,2,3\n-1,2,3\n")
    expect(isTraceError(r) && r.line === 3 && r.field === "arrival_seconds").toBe(true)
  })
  it("token counts and ranks follow the policies' one rule (safe non-negative integers), in every format", () => {
    const huge = "99999999999999999999" // an integer to JavaScript, above 2^53: not a token count
    const csv = parseTrace(`arrival_seconds,input_length,output_length\n0,${huge},10\n`)
    expect(isTraceError(csv) && csv.line === 2 && csv.field === "input_length").toBe(true)
    const jsonl = parseTrace(`{"timestamp":0,"input_length":10,"output_length":${huge}}\n`)
    expect(isTraceError(jsonl) && jsonl.field === "output_length").toBe(true)
    const rank = parseTrace(`{"arrival_seconds":0,"input_length":10,"output_length":1,"dp_rank":1.5}\n`)
    expect(isTraceError(rank) && rank.field === "dp_rank").toBe(true)
  })
  it("unknown formats are a TraceError", () => {
    expect(isTraceError(parseTrace("a,b,c\n1,2,3\n"))).toBe(true)
  })
})

describe("scaleTrace", () => {
  it("divides arrival times by the rate scale and cuts to the limit", () => {
    const t = [
      { requestId: "0", arrivalSeconds: 2, inputLength: 1, outputLength: 1 },
      { requestId: "1", arrivalSeconds: 4, inputLength: 1, outputLength: 1 }
    ]
    expect(scaleTrace(t, { rateScale: 2 }).map((r) => r.arrivalSeconds)).toEqual([1, 2])
    expect(scaleTrace(t, { limit: 1 })).toHaveLength(1)
  })
})

describe("parseTrace with a limit: the first N by arrival, read without holding every row", () => {
  const render: Record<string, (rows: ReadonlyArray<readonly [number, number, number]>) => string> = {
    "generic-csv": (rows) =>
      `arrival_seconds,input_length,output_length\n${rows.map(([t, i, o]) => `${t},${i},${o}\n`).join("")}`,
    "generic-jsonl": (rows) =>
      rows
        .map(([t, i, o]) => `${JSON.stringify({ arrival_seconds: t, input_length: i, output_length: o })}\n`)
        .join(""),
    mooncake: (rows) =>
      rows
        .map(([t, i, o]) => `${JSON.stringify({ timestamp: t * 1000, input_length: i, output_length: o })}\n`)
        .join(""),
    burstgpt: (rows) =>
      `Timestamp,Model,Request tokens,Response tokens\n${rows.map(([t, i, o]) => `${t},ChatGPT,${i},${o}\n`).join("")}`,
    azure: (rows) =>
      `TIMESTAMP,ContextTokens,GeneratedTokens\n${rows
        .map(
          ([t, i, o]) =>
            `${new Date(Date.UTC(2024, 4, 10) + t * 1000).toISOString().replace("T", " ").replace("Z", "+00:00")},${i},${o}\n`
        )
        .join("")}`
  }
  it("equals the whole read cut to N, for every format, unsorted rows with ties, any N", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(render) as Array<TraceFormat>)),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 20 }),
            fc.integer({ min: 1, max: 9 }),
            fc.integer({ min: 0, max: 9 })
          ),
          {
            minLength: 1,
            maxLength: 40
          }
        ),
        fc.integer({ min: 1, max: 50 }),
        (format, rows, limit) => {
          const text = render[format]!(rows)
          expect(ok(parseTrace(text, format, { limit }))).toEqual(
            ok(parseTrace(text, format)).slice(0, limit)
          )
        }
      ),
      { numRuns: 300 }
    )
  })
  it("the real traces: --limit 500 is the whole read's first 500; every row is still checked", () => {
    for (const [path, n] of [
      ["examples/traces/mooncake/conversation_trace.jsonl", 500],
      ["fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv", 500]
    ] as const) {
      const text = readFileSync(fixture(path), "utf8")
      expect(ok(parseTrace(text, undefined, { limit: n }))).toEqual(ok(parseTrace(text)).slice(0, n))
    }
    // a bad row after the first N is still an error with its line
    const csv = "arrival_seconds,input_length,output_length\n0,1,1\n1,1,1\n2,x,1\n"
    expect(parseTrace(csv, "generic-csv", { limit: 1 })).toMatchObject({
      _tag: "TraceError",
      line: 4,
      field: "input_length"
    })
    for (const bad of [0, 1.5, Number.NaN])
      expect(parseTrace(csv, "generic-csv", { limit: bad })).toMatchObject({
        _tag: "TraceError",
        field: "limit"
      })
    // the bad option is named before anything about the text (an empty text has no format)
    for (const text of ["", "not a trace"])
      expect(parseTrace(text, undefined, { limit: 0 })).toMatchObject({ _tag: "TraceError", field: "limit" })
  })
  it("CSV line endings may be mixed: CRLF with one LF line, and LF with one CRLF line", () => {
    // fresh-user trial: a CRLF Azure file with one LF-ended line failed with 'Invalid Record Length'
    const rows = [
      "TIMESTAMP,ContextTokens,GeneratedTokens",
      "2023-11-16 18:15:46.6805900,374,44",
      "2023-11-16 18:15:50.9951690,396,109",
      "2023-11-16 18:15:51.4405410,879,25"
    ]
    const want = ok(parseTrace(`${rows.join("\n")}\n`))
    expect(want).toHaveLength(3)
    expect(ok(parseTrace(`${rows[0]}\r\n${rows[1]}\n${rows[2]}\r\n${rows[3]}\r\n`))).toEqual(want)
    expect(ok(parseTrace(`${rows[0]}\n${rows[1]}\r\n${rows[2]}\n${rows[3]}`))).toEqual(want)
  })
  it("an empty CSV is still a missing-column error on line 1, not an empty trace", () => {
    expect(parseTrace("", "burstgpt")).toMatchObject({ _tag: "TraceError", line: 1, field: "Timestamp" })
  })
})
