/**
 * Seeds of the fuzz suite: every real payload of fixtures/payloads, the responses of the SGLang
 * golden vectors, and one valid sample per public decoder (2026 /v1/loads, vLLM V0 and V1 logger
 * lines, per-engine histograms, msgpack LoadStat, vLLM messages, MLP-sync rows).
 */
import { readdirSync, readFileSync } from "node:fs"

const root = new URL("../../../../fixtures/", import.meta.url)

const payloads = readdirSync(new URL("payloads/", root))
  .filter((f) => f !== "README.md")
  .map((f) => readFileSync(new URL(`payloads/${f}`, root), "utf8"))

const vectors = (
  JSON.parse(readFileSync(new URL("reference/sglang/v1_loads_snapshots.json", root), "utf8")) as {
    vectors: Array<{ response: unknown }>
  }
).vectors
  .filter((v) => v.response !== null)
  .map((v) => JSON.stringify(v.response))

const v1Loads2026 = JSON.stringify({
  timestamp: "2026-10-07T10:00:00+00:00",
  version: "0.5.9",
  accelerator: "NVIDIA H200",
  num_accelerators: 8,
  server_monotonic_s: 99.5,
  loads: [0, 1, 2].map((i) => ({
    timestamp: 1791417180.1,
    snapshot_monotonic_s: 99.4,
    dp_rank: i,
    num_running_reqs: 3,
    num_waiting_reqs: 1,
    num_waiting_uncached_tokens: 700,
    num_used_tokens: 30000,
    num_total_tokens: 31000,
    num_active_tokens: 30000,
    num_prealloc_ready_tokens: 64,
    max_total_num_tokens: 204000,
    max_running_requests: 128,
    token_usage: 0.15,
    gen_throughput: 41.5,
    cache_hit_rate: 0.5,
    utilization: 0.2,
    total_prefill_uncached_tokens: 123456,
    total_prefill_busy_us: 999,
    decode_moments: [1.0, 2.0, 3.0],
    decode_metrics_windows: { "1s": { p50: [1, 2, { x: [3] }] } },
    queues: { waiting: 1, grammar: 0, paused: 0, retracted: 2, prealloc_ready: 1 },
    disaggregation: { mode: "decode", decode_prealloc_queue_reqs: 3 },
    memory: { weight_gb: 15.2, kv_cache_gb: 52.1, graph_gb: 1.25, token_capacity: 409600 },
    kv_capacity: { full_available_tokens: 120000, full_evictable_tokens: 30000 }
  }))
})

const texts = [
  "Engine 000: Avg prompt throughput: 16.5 tokens/s, Avg generation throughput: 1157.2 tokens/s, Running: 51 reqs, Waiting: 117 reqs, GPU KV cache usage: 100.0%, Prefix cache hit rate: 70.0%",
  "INFO 06-12 10:00:00 metrics.py:345] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 12.1 tokens/s, Running: 2 reqs, Swapped: 1 reqs, Pending: 7 reqs, GPU KV cache usage: 45.3%, CPU KV cache usage: 0.5%.",
  [
    "# TYPE vllm:num_requests_running gauge",
    'vllm:num_requests_running{engine="0",model_name="m"} 3',
    'vllm:num_requests_waiting{engine="1",model_name="m"} 2',
    'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.25',
    "# TYPE vllm:iteration_tokens_total histogram",
    'vllm:iteration_tokens_total_bucket{engine="0",le="1.0",model_name="m"} 2',
    'vllm:iteration_tokens_total_count{engine="1",model_name="m"} 5'
  ].join("\n"),
  Array.from(
    { length: 8 },
    (_, i) => `sglang:num_retracted_reqs{dp_rank="${i}"} ${i}\nsglang:num_paused_reqs{dp_rank="${i}"} 0`
  ).join("\n"),
  'sglang_num_total_tokens{dp_rank="2"} 3000\nsglang_num_prealloc_ready_tokens{dp_rank="2"} 10\n',
  '[{"dp_rank":0,"num_reqs":3,"num_waiting_reqs":1,"num_tokens":50,"num_pending_tokens":5,"ts_tic":2359325.1}]',
  '[["LoadStat",3,2,256,4096,0],["LoadStat",1,0,10,4096,1]]',
  "dp_rank=0 num_running_reqs=0 num_queue_reqs=0\ndp_rank=1 num_running_reqs=1 num_queue_reqs=11\n"
]

/** Text seeds (every text decoder reads these, mutated). */
export const textSeeds: ReadonlyArray<string> = [...payloads, ...vectors, v1Loads2026, ...texts]

/** Object seeds for the decoders of already parsed messages. */
export const objectSeeds = {
  engineCounts: [[117, 51, 1.0]],
  coordinatorUpdate: [
    [
      [
        [117, 51, 1.0],
        [0, 8, 0.5]
      ],
      3,
      true
    ],
    [null, 0, false]
  ],
  schedulerStats: [
    { num_running_reqs: 8, num_waiting_reqs: 0, kv_cache_usage: 0.4, step_counter: 31, current_wave: 2 }
  ],
  mlpSyncRows: [
    [
      [5, 5, 1, 0, 1, 2, 1, 0, 1, 0, 3],
      [0, 0, 1, 0, 1, 2, 1, 0]
    ]
  ],
  loadStatTagged: [["LoadStat", 3, 2, 256, 4096, 0]],
  loadSnapshot: [JSON.parse(v1Loads2026).loads[0]]
} as const
