import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  predict,
  vidurAttentionSamples,
  vidurCollectiveSamples,
  vidurFileInfo,
  vidurMlpSamples
} from "../src/index.js"

const fixture = (f: string) =>
  readFileSync(new URL(`../../../fixtures/calibration/vidur/${f}`, import.meta.url), "utf8")

describe("Vidur mlp.csv", () => {
  it("reads the real file: one layer sample per row, summed op medians in seconds", () => {
    const rows = Result.getOrThrow(
      vidurMlpSamples(fixture("a100_meta-llama_Llama-2-70b-hf_mlp.csv"), { gpu: "a100", model: "llama2-70b" })
    )
    expect(rows.length).toBe(1044)
    const r = rows[0]!
    // first row: TP1, 4096 tokens; medians 0.193 + 2.872 + 0.1725 + 2.377 + 0.192 + 15.9405 + 0.676 + 8.0635 + 0.112 ms
    expect(r.tokens).toBe(4096)
    expect(r.model.tp).toBe(1)
    expect(r.gpu.name).toBe("a100-80gb")
    expect(r.phase).toBe("prefill")
    expect(r.measuredSeconds).toBeCloseTo(30.5985e-3, 9)
    expect(r.model.attention.paramsPerLayer).toBe(8192 * 10240 + 8192 * 8192)
  })
  it("phi-2 has no post_attention_layernorm and a 2-matrix GELU MLP: still read", () => {
    const rows = Result.getOrThrow(vidurMlpSamples(fixture("a100_microsoft_phi-2_mlp.csv"), { gpu: "a100" }))
    expect(rows.length).toBe(261)
    const m = rows[0]!.model
    expect(m.mlp.kind === "dense" && m.mlp.paramsPerLayer).toBe(2 * 2560 * 10240)
  })
  it("extra columns are ignored; a missing required column or a bad value is named", () => {
    const head =
      "time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,time_stats.mlp_up_proj.median,time_stats.mlp_down_proj.median,n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,num_tokens,num_tensor_parallel_workers"
    const ok = vidurMlpSamples(`${head},new_col\n0.1,0.1,0.5,0.3,64,8,8192,28672,True,8,2,zzz\n`, {
      gpu: "h100"
    })
    expect(Result.isSuccess(ok) && ok.success[0]!.measuredSeconds).toBeCloseTo(0.001, 12)
    const missing = vidurMlpSamples(head.replace(",num_tokens", ""), { gpu: "h100" })
    expect(Result.isFailure(missing) && missing.failure).toMatchObject({ field: "num_tokens", row: 1 })
    const bad = vidurMlpSamples(`${head}\n0.1,x,0.5,0.3,64,8,8192,28672,True,8,2\n`, { gpu: "h100" })
    expect(Result.isFailure(bad) && bad.failure).toMatchObject({
      field: "time_stats.attn_post_proj.median",
      row: 2
    })
    const gpu = vidurMlpSamples(head, { gpu: "tpu" })
    expect(Result.isFailure(gpu) && gpu.failure.field).toBe("gpu")
    // a splitwise CSV is not a Vidur file: the first missing column is named
    const sw = vidurMlpSamples("model,hardware\nx,y\n", { gpu: "a100" })
    expect(Result.isFailure(sw) && sw.failure.field).toBe("time_stats.attn_pre_proj.median")
  })
})

describe("Vidur network and attention files", () => {
  it("all_reduce.csv: intra-node rows only, bytes and GPUs from size and num_workers", () => {
    const rows = Result.getOrThrow(
      vidurCollectiveSamples(fixture("a100_dgx_all_reduce.csv"), { gpu: "a100_dgx" })
    )
    expect(rows.every((r) => r.kind === "all-reduce")).toBe(true)
    expect([...new Set(rows.map((r) => r.gpus))].sort()).toEqual([2, 4, 8])
    expect(rows[0]!.gpu.name).toBe("a100-80gb")
    const all = Result.getOrThrow(
      vidurCollectiveSamples(fixture("a100_dgx_all_reduce.csv"), { gpu: "a100_dgx", interNode: true })
    )
    expect(all.length).toBe(6958)
    const sr = Result.getOrThrow(
      vidurCollectiveSamples(fixture("a100_dgx_send_recv.csv"), { gpu: "a100_dgx" })
    )
    expect(sr.every((r) => r.kind === "send-recv" && r.gpus === 2)).toBe(true)
  })
  it("attention.csv in the published format: prefill and decode rows", () => {
    const head =
      "time_stats.attn_input_reshape.median,time_stats.attn_decode.median,time_stats.attn_output_reshape.median,time_stats.attn_prefill.median,time_stats.attn_kv_cache_save.median,n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,max_model_len,batch_size,prefill_chunk_size,kv_cache_size,is_prefill,attention_backend"
    const csv = `${head}\n0,0,0.001,0.5,0.01,4096,32,32,16,1,4096,1,512,1024,True,AttentionBackend.FLASH_ATTENTION\n0,0.08,0.001,0,0.01,4096,32,32,16,2,4096,16,0,2048,False,AttentionBackend.FLASH_ATTENTION\n`
    const rows = Result.getOrThrow(vidurAttentionSamples(csv, { gpu: "a100", model: "llama2-7b" }))
    expect(rows[0]!.ranks[0]!.extend).toEqual([{ prefix: 1024, tokens: 512 }])
    expect(rows[0]!.measuredSeconds).toBeCloseTo(0.51e-3, 12)
    expect(rows[1]!.ranks[0]!.decode).toEqual(new Array(16).fill(2048))
    expect(rows[1]!.model.tp).toBe(2)
    expect(predict(rows[1]!, {})).toBeGreaterThan(0)
    const missing = vidurAttentionSamples(head.replace(",is_prefill", ""), { gpu: "a100" })
    expect(Result.isFailure(missing) && missing.failure.field).toBe("is_prefill")
  })
  it("file names: flattened and upstream layouts", () => {
    expect(vidurFileInfo("a40_internlm_internlm-20b_mlp.csv")).toEqual({
      kind: "mlp",
      gpu: "a40",
      model: "internlm-20b"
    })
    expect(vidurFileInfo("data/profiling/compute/h100/meta-llama/Llama-2-70b-hf/attention.csv")).toEqual({
      kind: "attention",
      gpu: "h100",
      model: "llama2-70b"
    })
    expect(vidurFileInfo("a100_pairwise_nvlink_send_recv.csv")?.gpu).toBe("a100_pairwise_nvlink")
    expect(vidurFileInfo("perf_model.csv")).toBeUndefined()
  })
})
