/**
 * Rank identity on exposition pages that hold more than one engine: a gateway's fleet page
 * (`worker` label, each worker with its own `dp_rank` 0..n: rows keyed by (worker, dpRank)),
 * engine-level series without a rank label beside per-rank ones (kept rank-less, never rank 0),
 * and a vLLM page where some engines carry only histograms and counters.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeLedgerReport } from "../src/index.js"

const report = (text: string) => {
  const r = decodeLedgerReport(text)
  if (r._tag === "Failure") throw new Error(r.failure.message)
  return r.success
}

describe("fleet pages: (worker, dpRank)", () => {
  it("keeps every worker's rank 0..n apart, never a duplicate", () => {
    const r = report(
      [
        'sglang:num_running_reqs{worker="http://a:8000",dp_rank="0"} 1',
        'sglang:num_running_reqs{worker="http://a:8000",dp_rank="1"} 2',
        'sglang:num_running_reqs{worker="http://b:8000",dp_rank="0"} 3',
        'sglang:num_decode_transfer_queue_reqs{worker="http://b:8000",dp_rank="0"} 4',
        ""
      ].join("\n")
    )
    expect(r.rows).toEqual([
      { dpRank: 0, worker: "http://a:8000", numRunningReqs: 1 },
      { dpRank: 0, worker: "http://b:8000", numRunningReqs: 3, numDecodeTransferQueueReqs: 4 },
      { dpRank: 1, worker: "http://a:8000", numRunningReqs: 2 }
    ])
    expect(r.notices.filter((n) => n._tag === "UnknownRank")).toEqual([])
  })

  it("still marks a rank reported twice by the same worker", () => {
    const r = decodeLedgerReport(
      'sglang:num_running_reqs{worker="a",dp_rank="0"} 1\nsglang:num_running_reqs{worker="a",dp_rank="0"} 2\n'
    )
    expect(r._tag === "Failure" && r.failure.message).toBe(
      'ambiguous series: sglang:num_running_reqs{dp_rank="0",worker="a"} repeats the series of line 1'
    )
  })

  it("property: W workers with R ranks each give W x R rows, none unknown", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        (w, n, crlf) => {
          const lines: Array<string> = []
          for (let i = 0; i < w; i++)
            for (let d = 0; d < n; d++)
              lines.push(`sglang:num_queue_reqs{dp_rank="${d}",worker="w${i}"} ${i * 100 + d}`)
          const r = report(lines.join(crlf ? "\r\n" : "\n") + (crlf ? "\r\n" : "\n"))
          expect(r.rows.length).toBe(w * n)
          expect(
            r.rows.every(
              (x) =>
                x.unknown === undefined && x.numWaitingReqs === Number(x.worker!.slice(1)) * 100 + x.dpRank
            )
          ).toBe(true)
        }
      ),
      { numRuns: 100 }
    )
  })
})

describe("engine-level series beside per-rank ones", () => {
  it("stay rank-less: rank 0 keeps its own numbers", () => {
    const r = report(
      'sglang:num_running_reqs{dp_rank="0"} 3\nsglang:num_running_reqs{dp_rank="1"} 4\nsglang:num_running_reqs 7\nsglang:num_queue_reqs 2\n'
    )
    expect(r.rows).toEqual([
      { dpRank: 0, numRunningReqs: 3 },
      { dpRank: 1, numRunningReqs: 4 }
    ])
    expect(r.rankless).toEqual([{ numRunningReqs: 7, numWaitingReqs: 2 }])
    expect(r.notices.map((n) => n._tag)).toEqual(["UnknownSeries"])
  })
  it("a page with no rank label at all is one engine, rank 0 as SGLang itself reports it", () => {
    // SGLang's KV metrics: `data_parallel_rank = self.dp_rank if self.dp_rank is not None else 0`
    // (scheduler_metrics_mixin.py, 01bb3c807f7e62c19a31de7548837505488c2b64)
    const r = report("sglang:num_running_reqs 7\n")
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 7 }])
    expect(r.rankless).toBeUndefined()
    expect(r.notices.map((n) => n._tag)).toEqual(["DefaultedIdentity"])
  })
})

describe("vLLM pages where some engines have only histograms and counters", () => {
  it("every engine named appears, with its known fields, the rest absent", () => {
    const r = report(
      [
        "# TYPE vllm:num_requests_running gauge",
        'vllm:num_requests_running{engine="0",model_name="m"} 5',
        "# TYPE vllm:time_to_first_token_seconds histogram",
        'vllm:time_to_first_token_seconds_count{engine="1",model_name="m"} 9',
        "# TYPE vllm:num_requests_running_v2 gauge",
        'vllm:num_requests_running_v2{engine="2",model_name="m"} 3',
        ""
      ].join("\n")
    )
    expect(r.rows).toEqual([{ dpRank: 0, numRunningReqs: 5 }, { dpRank: 1 }, { dpRank: 2 }])
    expect(
      r.notices
        .filter((n) => n._tag === "UnknownSeries")
        .map((n) => (n._tag === "UnknownSeries" ? n.series : ""))
    ).toEqual(["vllm:time_to_first_token_seconds", "vllm:num_requests_running_v2"])
  })
})
