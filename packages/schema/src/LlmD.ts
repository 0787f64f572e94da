/**
 * llm-d's endpoint picker (EPP, the inference scheduler's gateway extension) Prometheus page as
 * ledger rows: its per-endpoint queue gauge, one endpoint per DP rank of a pod.
 *
 * Upstream (llm-d/llm-d-inference-scheduler at 520af47896e5f06e43d09aca281a1149187b0ffd, read to
 * learn the wire form; no code copied): `pkg/epp/metrics/collectors/inference_pool.go`
 * (`inference_pool_per_pod_queue_size{name, model_server_pod}`, each endpoint's
 * `WaitingQueueSize`), its test `inference_pool_test.go` (the `pod1-rank-0` endpoint name),
 * `pkg/epp/datastore/datastore.go` (`createEndpointNamespacedName`: `<pod>-rank-<index>`, one
 * endpoint per target port, i.e. per DP rank) and `pkg/epp/metrics/metrics.go` (the pool-wide
 * `inference_pool_average_*` and `inference_pool_ready_pods` gauges, labelled by pool `name`).
 *
 * @since 0.7.0
 */
import type * as Result from "effect/Result"
import type { DecodeError } from "./DecodeError.js"
import { type GatewaySpec, pageHasPrefix, rowsOfGatewayPage } from "./internal/gatewayPage.js"
import type { Field } from "./internal/ledgerRows.js"
import type { LedgerNotice } from "./LedgerNotice.js"
import type { RankLoad, RanklessLoad } from "./RankLoad.js"

const llmdSpec: GatewaySpec = {
  source: "llm-d endpoint picker",
  prefixes: ["inference_pool_", "inference_objective_", "inference_extension_", "llm_d_"],
  fields: new Map<string, ReadonlyArray<Field>>([["inference_pool_per_pod_queue_size", ["numWaitingReqs"]]]),
  identity: (labels) => {
    const pod = labels["model_server_pod"]
    if (pod === undefined) return "no model_server_pod label"
    const m = /^(.+)-rank-(\d{1,15})$/.exec(pod)
    return m === null ? { worker: pod } : { worker: m[1]!, dpRank: Number(m[2]) }
  }
}

/**
 * Decode an llm-d endpoint picker `/metrics` page to ledger rows, pushing notices and rank-less
 * loads.
 *
 * **Rows**: `inference_pool_per_pod_queue_size` -> `numWaitingReqs`, one row per endpoint: an
 * endpoint named `<pod>-rank-<n>` is (`worker` `<pod>`, `dpRank` n); a bare pod name (releases
 * before per-rank endpoints) is the pod's rank-less load beside ranked ones, or rank 0 with a
 * `DefaultedIdentity` notice on a page where no endpoint has a rank. The pool-wide gauges
 * (`inference_pool_average_kv_cache_utilization`, `_average_queue_size`,
 * `_average_running_requests`, `_ready_pods`) are averages over the pool, no rank's load: they
 * and the EPP's other families get `UnknownSeries` notices.
 *
 * **Errors**: syntax (its line), a queue sample without `model_server_pod` (`InvalidField` on its
 * line), a page without the gauge (`UnknownSeries`).
 *
 * **When to use**: through `decodeLedger(text, "llm-d-metrics")` (or `auto`, which detects
 * `inference_pool_` names).
 *
 * @example
 * ```ts
 * import { decodeLlmDMetrics } from "@loadledger/schema"
 * const page = 'inference_pool_per_pod_queue_size{model_server_pod="pod1-rank-0",name="pool"} 100\ninference_pool_per_pod_queue_size{model_server_pod="pod1-rank-1",name="pool"} 4\n'
 * const r = decodeLlmDMetrics(page, [], [])
 * r._tag === "Success" && r.success // => [{ dpRank: 0, worker: "pod1", numWaitingReqs: 100 }, { dpRank: 1, worker: "pod1", numWaitingReqs: 4 }]
 * ```
 *
 * @category llm-d
 * @since 0.7.0
 */
export const decodeLlmDMetrics = (
  text: string,
  notices: Array<LedgerNotice>,
  rankless: Array<RanklessLoad>
): Result.Result<Array<RankLoad>, DecodeError> => rowsOfGatewayPage(text, llmdSpec, notices, rankless)

/**
 * Whether a text has the llm-d endpoint picker's pool gauges (`inference_pool_` at a line start).
 *
 * **When to use**: `decodeLedger`'s `auto` detection.
 *
 * @example
 * ```ts
 * import { looksLikeLlmDMetrics } from "@loadledger/schema"
 * looksLikeLlmDMetrics("# TYPE inference_pool_per_pod_queue_size gauge\n") // => true
 * looksLikeLlmDMetrics("vllm:num_requests_waiting 0\n") // => false
 * ```
 *
 * @category llm-d
 * @since 0.7.0
 */
export const looksLikeLlmDMetrics = (text: string): boolean => pageHasPrefix(text, "inference_pool_")
