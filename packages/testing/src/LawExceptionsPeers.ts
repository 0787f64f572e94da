/**
 * The law exceptions of the peer routers' policies (smg/*, production-stack/*, llm-d/*, dynamo/*,
 * aibrix/*): upstream behaviour reproduced on purpose, each with a counterexample the registry
 * runner checks. Joined into `lawExceptions` (LawExceptions.ts).
 *
 * @since 0.2.0
 */
import { affinityBurst, peerScenario } from "./internal/lawCases.js"
import { peerUnknownTieExceptions } from "./internal/peerUnknownTies.js"
import type { LawException } from "./LawTypes.js"

// Why each peer policy's choice does not follow a relabelling of the ranks.
const TIES_LOWEST = "ties go to the first worker in list order (upstream)"
const DRAW_POSITION = "the seeded draw indexes the healthy workers by position, not by load (upstream)"
const RING =
  "the routing key hashes onto a ring of worker urls, so the label, not the load, decides (upstream)"
const LLMD_SHUFFLE =
  "the max-score picker shuffles the endpoints with a draw; equal scores go by draw (llm-d upstream)"
const AIBRIX_SHUFFLE =
  "ready pods are shuffled by a draw and ties go to a draw or scan position (AIBrix upstream)"

const permutationReasons: Readonly<Record<string, string>> = {
  "smg/round-robin": "a global counter modulo the healthy count picks by position (SMG upstream)",
  "smg/random": DRAW_POSITION,
  "smg/power-of-two": DRAW_POSITION,
  "vllm-router/power-of-two": DRAW_POSITION,
  "smg/least-load": TIES_LOWEST,
  "smg/cache-aware": "no prefix match: lowest (load, processed) with ties to the first worker (SMG upstream)",
  "smg/prefix-hash": RING,
  "smg/prefix-hash@v1.9.0": RING,
  "smg/consistent-hashing": RING,
  "smg/dp-min-token": "ties on used tokens go to the lowest DP rank (SMG upstream)",
  "production-stack/roundrobin": "the counter walks the endpoints sorted by url (production-stack upstream)",
  "production-stack/session": RING,
  "vllm-router/consistent-hash": RING,
  "vllm-router/rendezvous-hash":
    "the key and the worker url hash to each worker's score, so the label decides (vllm-router upstream)",
  "production-stack/prefixaware":
    "the draw indexes the candidate endpoints by position (production-stack upstream)",
  "production-stack/loadaware":
    "no holder: the QPS fallback takes the first endpoint missing from the stats; equal scores go to the smallest url (production-stack #1035)",
  ...Object.fromEntries(
    [
      "profile",
      "profile-load-aware",
      "queue-scorer",
      "kv-cache-utilization-scorer",
      "running-requests-size-scorer",
      "load-aware-scorer",
      "active-request-scorer",
      "token-load-scorer",
      "prefix-cache-scorer",
      "utilization-detector"
    ].map((n) => [`llm-d/${n}`, LLMD_SHUFFLE])
  ),
  "llm-d/weighted-random-picker": "A-Res keys come from draws in endpoint order (llm-d upstream)",
  "dynamo/kv": "equal costs go to a uniform draw among the minima (Dynamo upstream)",
  "dynamo/kv-t0.5": "softmax sampling draws over the workers in order (Dynamo upstream)",
  "dynamo/vllm-style": "ties go to the first minimum from the rotating start index 0 (Dynamo upstream)",
  ...Object.fromEntries(
    [
      "least-request",
      "throughput",
      "least-kv-cache",
      "least-gpu-cache",
      "least-busy-time",
      "least-latency",
      "random",
      "prefix-cache",
      "power-of-two",
      "multi",
      "load-balance",
      "least-utilization",
      "slo",
      "slo-least-load-pulling",
      "slo-least-load",
      "slo-pack-load"
    ].map((n) => [`aibrix/${n}`, AIBRIX_SHUFFLE])
  )
}

// Why k equal requests against equal stale snapshots do not spread; `shared` when the burst must
// share a prefix and session (affinity), otherwise plain requests show it.
const NO_INFLIGHT =
  "scores scraped metrics only, no in-flight term: the whole burst sees equal scores and the draw decides"
const burstReasons: Readonly<
  Record<
    string,
    { readonly reason: string; readonly k: number; readonly ranks?: 3 | 5; readonly shared?: true }
  >
> = {
  "smg/random": { reason: "one uniform draw per request, no load term (SMG upstream)", k: 4 },
  "smg/power-of-two": {
    reason: "compares only two drawn workers; the same pair can take several requests (SMG upstream)",
    k: 4
  },
  "smg/cache-aware": {
    reason: "a prefix hit goes to the tree's tenant until the imbalance gate trips (SMG upstream)",
    k: 2,
    shared: true
  },
  "smg/prefix-hash": {
    reason:
      "one prefix (or routing key) keeps its ring position until that worker passes max(1.25 x mean, mean + 10) (SMG upstream)",
    k: 2,
    shared: true
  },
  "smg/prefix-hash@v1.9.0": {
    reason: "one prefix keeps its ring position until that worker passes 1.25 x the mean load (SMG v1.9.0)",
    k: 2,
    shared: true
  },
  "smg/consistent-hashing": {
    reason: "one routing key always maps to one worker (SMG upstream)",
    k: 2,
    shared: true
  },
  "production-stack/session": {
    reason: "one session id always maps to one endpoint (production-stack upstream)",
    k: 2,
    shared: true
  },
  "vllm-router/consistent-hash": {
    reason: "one session key always maps to one worker, no load term (vllm-router upstream)",
    k: 2,
    shared: true
  },
  "vllm-router/rendezvous-hash": {
    reason: "one session key always scores highest on one worker, no load term (vllm-router upstream)",
    k: 2,
    shared: true
  },
  "vllm-router/power-of-two": {
    reason:
      "compares only two drawn workers: with 5 workers a loaded pair can be drawn while another idles (vllm-router upstream)",
    k: 5,
    ranks: 5
  },
  "production-stack/prefixaware": {
    reason:
      "a matched prefix goes only to the endpoints holding it, with no load bound (production-stack upstream)",
    k: 2,
    shared: true
  },
  "production-stack/loadaware": {
    reason:
      "no engine holds the prompt: one session id always maps to one endpoint on the kvaware fallback ring (production-stack #1035)",
    k: 2,
    shared: true
  },
  ...Object.fromEntries(
    [
      "profile",
      "queue-scorer",
      "kv-cache-utilization-scorer",
      "running-requests-size-scorer",
      "load-aware-scorer",
      "utilization-detector"
    ].map((n) => [`llm-d/${n}`, { reason: `${NO_INFLIGHT} (llm-d upstream)`, k: 2 }])
  ),
  "llm-d/prefix-cache-scorer": {
    reason:
      "scores the prefix index only, no in-flight term: the picker's draw decides the burst (llm-d upstream)",
    k: 2
  },
  "llm-d/weighted-random-picker": {
    reason: "A-Res draws pick each request independently, no in-flight term (llm-d upstream)",
    k: 2
  },
  "llm-d/profile-load-aware": {
    reason:
      "prefix-cache (weight 3) outweighs active-request (2): a shared prefix stays on its holder (llm-d upstream)",
    k: 2,
    shared: true
  },
  "dynamo/kv-t0.5": {
    reason:
      "softmax sampling at temperature 0.5 can stack draws despite the in-flight cost (Dynamo upstream)",
    ranks: 3,
    k: 3
  },
  ...Object.fromEntries(
    [
      "throughput",
      "least-kv-cache",
      "least-gpu-cache",
      "least-busy-time",
      "least-latency",
      "least-utilization"
    ].map((n) => [`aibrix/${n}`, { reason: `${NO_INFLIGHT} (AIBrix upstream)`, k: 2 }])
  ),
  "aibrix/random": { reason: "one draw per request, no load term (AIBrix upstream)", k: 2 },
  "aibrix/slo-pack-load": {
    reason:
      "packs onto the most loaded pod still under the pending-load cap: a burst fills one pod first (AIBrix upstream, pack_load.go)",
    k: 2
  },
  "aibrix/power-of-two": {
    reason:
      "compares only two drawn pods: a burst can pile on a pair while a third pod idles (AIBrix upstream)",
    ranks: 3,
    k: 3
  },
  "aibrix/prefix-cache": {
    reason: "a matched prefix stays on its pods until the imbalance gate trips (AIBrix upstream)",
    k: 2,
    shared: true
  },
  "aibrix/multi": {
    reason:
      "prefix-cache (weight 2) outweighs least-request (1): a shared prefix stays on its pod (AIBrix upstream)",
    k: 2,
    shared: true
  }
}

/**
 * The peer routers' rows of `lawExceptions`: every peer policy breaks `permutationEquivariant`
 * (ties by draw, by candidate order or by a ring hash of the worker names), those with no
 * in-flight term, with draws, or with prefix/session affinity break `burstSpread`, and those whose
 * tie rule lets an unknown worker (scored as the busiest known) win a tie break
 * `unknownNeverAttractive`. Each row's
 * counterexample uses equal rows (2 running, 1 waiting, 100 tokens, KV 0.5) at 1 s; the
 * permutation swaps two ranks; a burst is `k` requests on 2 ranks (3 or 5 where noted), carrying
 * session `s1` and blocks `1, 2` where affinity is the reason.
 *
 * **When to use**: read it to see why a peer policy breaks a law; add a row here when a new peer
 * policy breaks one on purpose (the registry runner checks the counterexample).
 *
 * @example
 * ```ts
 * import { peerLawExceptions } from "@loadledger/testing"
 * peerLawExceptions.some((x) => x.policy === "smg/random" && x.law === "burstSpread") // => true
 * peerLawExceptions.some((x) => x.policy === "aibrix/least-request" && x.law === "burstSpread") // => false
 * ```
 *
 * @category laws
 * @since 0.2.0
 */
export const peerLawExceptions: ReadonlyArray<LawException> = [
  ...Object.entries(permutationReasons).map(
    ([policy, reason]): LawException => ({
      policy,
      law: "permutationEquivariant",
      reason,
      // two equal ranks relabelled 0 <-> 1: the decision keeps its label
      counterexample: [[peerScenario(2, 1, true), [1, 0]]]
    })
  ),
  ...peerUnknownTieExceptions,
  {
    policy: "vllm-router/power-of-two",
    law: "noStarvationUnderAffinity",
    reason: "two random draws ignore who is idle: above 4 workers one can go undrawn (vllm-router upstream)",
    // 5 streams on 5 ranks with the default seed: the in-flight term spreads 4 ranks or fewer
    counterexample: [affinityBurst(5, 1)]
  },
  ...Object.entries(burstReasons).map(
    ([policy, { reason, k, ranks, shared }]): LawException => ({
      policy,
      law: "burstSpread",
      reason,
      counterexample: [peerScenario(ranks ?? 2, k, shared === true)]
    })
  )
]
