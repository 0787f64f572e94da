/**
 * The router in front of the ranks, with a ledger exactly as stale as the engine's:
 * - sglang: each scheduler writes its snapshot at its step boundary (`observe` = the shared-memory
 *   write); the controller's policy reads them on arrival, at most once per 20 ms (the throttle is
 *   the SGLang policies' own `refresh`, sglang `data_parallel_controller.py`, see
 *   fixtures/reference/sglang/README.md).
 * - vllm: engines report `[waiting, running, kv]` to the coordinator after each step; the
 *   coordinator publishes to every front end at most every `coordinatorIntervalSeconds` when
 *   something changed (vllm `DPCoordinatorProc` @00080ee1); each front end routes its share of
 *   the arrivals with its own policy state and in-flight counts.
 */
import type { Policy, PolicyError, PolicyOptions, RankLoad } from "@loadledger/policies"
import type { Rank, Req } from "./rank.js"

interface FrontEnd {
  readonly policy: Policy<unknown>
  state: unknown
}

export class Router {
  private readonly fronts: Array<FrontEnd> = []
  private readonly shm: Array<RankLoad | undefined>
  private lastPublish = Number.NEGATIVE_INFINITY
  nextPublish = Number.POSITIVE_INFINITY

  constructor(
    make: (o: PolicyOptions) => Policy<unknown>,
    private readonly engine: "sglang" | "vllm",
    dpSize: number,
    frontEnds: number,
    seed: number,
    private readonly coordinatorIntervalSeconds: number,
    private readonly kvPoolTokens: number
  ) {
    for (let i = 0; i < frontEnds; i++) {
      const policy = make({ clientCount: frontEnds, clientIndex: i, seed })
      this.fronts.push({ policy, state: policy.init(dpSize) })
    }
    this.shm = new Array<RankLoad | undefined>(dpSize).fill(undefined)
  }

  private loads(): Array<RankLoad> {
    const out: Array<RankLoad> = []
    for (const l of this.shm) if (l) out.push(l)
    return out
  }

  /** Place one arrival; the chosen rank, or the policy's error. */
  route(r: Req, now: number): number | PolicyError {
    const f = this.fronts[r.index % this.fronts.length]!
    r.frontEnd = r.index % this.fronts.length
    const res = f.policy.route(
      f.state,
      {
        requestId: r.t.requestId,
        inputLength: r.t.inputLength,
        routedDpRank: r.t.dpRank,
        bootstrapRoom: r.room,
        prefixHashes: r.t.hashIds?.map(String)
      },
      now
    )
    if (res._tag === "PolicyError") {
      // upstream effects before the failure (e.g. a consumed refresh window) still count
      if (res.state !== undefined) f.state = res.state
      return res
    }
    f.state = res.state
    return res.rank
  }

  finish(r: Req, now: number): void {
    const f = this.fronts[r.frontEnd]!
    f.state = f.policy.finish(f.state, [r.t.requestId], now)
  }

  /** Ranks finished a step at `now`: they publish (sglang) or report to the coordinator (vllm). */
  stepEnd(ranks: ReadonlyArray<Rank>, now: number): void {
    for (const rank of ranks) this.snapshot(rank, now)
    if (this.engine === "sglang") {
      const loads = ranks.map((r) => this.shm[r.id]!)
      for (const f of this.fronts) f.state = f.policy.observe(f.state, loads, now)
    } else if (this.nextPublish === Number.POSITIVE_INFINITY)
      this.nextPublish = Math.max(now, this.lastPublish + this.coordinatorIntervalSeconds)
  }

  private snapshot(rank: Rank, now: number): void {
    this.shm[rank.id] = {
      dpRank: rank.id,
      timestamp: now,
      numRunningReqs: rank.running.length,
      numWaitingReqs: rank.waiting.length,
      numTotalTokens: rank.usedTokens() + rank.waitingUncached,
      kvCacheUsage: rank.usedTokens() / this.kvPoolTokens
    }
  }

  /** The coordinator publishes its counts to every front end (vllm). */
  publish(now: number): void {
    const loads = this.loads().map((l) => ({ ...l, timestamp: now }))
    for (const f of this.fronts) f.state = f.policy.observe(f.state, loads, now)
    this.lastPublish = now
    this.nextPublish = Number.POSITIVE_INFINITY
  }
}
