/**
 * The router's front ends: each its own policy state (`frontEnds`: vLLM's API-server processes;
 * one on SGLang), routing its share of the arrivals (request `i` goes to front end
 * `i % frontEnds`) and observing the load rows its engine hands it (`observe`, called by the
 * engine's run, `engines/<name>/`, as stale as that engine's ledger).
 */
import type { Policy, PolicyError, PolicyOptions, RankLoad } from "@loadledger/policies"
import type { Req } from "./req.js"

interface FrontEnd {
  readonly policy: Policy<unknown>
  state: unknown
}

export class Router {
  private readonly fronts: Array<FrontEnd> = []

  constructor(make: (o: PolicyOptions) => Policy<unknown>, dpSize: number, frontEnds: number, seed: number) {
    for (let i = 0; i < frontEnds; i++) {
      const policy = make({ clientCount: frontEnds, clientIndex: i, seed })
      this.fronts.push({ policy, state: policy.init(dpSize) })
    }
  }

  /** Place one arrival; the chosen rank, or the policy's error. */
  route(r: Req, now: number): number | PolicyError {
    const f = this.fronts[r.index % this.fronts.length]!
    r.frontEnd = r.index % this.fronts.length
    const res = f.policy.route(f.state, r.routeRequest(), now)
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

  /** Every front end observes `loads` at `now`, in order. */
  readonly observe = (loads: ReadonlyArray<RankLoad>, now: number): void => {
    for (const f of this.fronts) f.state = f.policy.observe(f.state, loads, now)
  }
}
