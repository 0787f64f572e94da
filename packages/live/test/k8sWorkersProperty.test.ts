/**
 * Workers that come and go through EndpointSlices, on the pure core: random condition changes
 * (ready, serving, terminating) of a Service's pods, read with `endpointSliceWorkers`, reconciled
 * into the router with `addWorker` / `removeWorker` / `compactWorkers` as `startServe` does, with
 * routes and releases interleaved: no request lost, none counted twice, never placed on a pod out
 * of the set, every in-flight count back to 0 once all are released (fast-check).
 */
import { fc, test } from "@fast-check/vitest"
import type { V1EndpointSlice } from "@kubernetes/client-node"
import { findPolicy } from "@loadledger/policies"
import { expect } from "vitest"
import {
  addWorker,
  compactWorkers,
  endpointSliceWorkers,
  finish,
  makeRouter,
  type RouterState,
  removeWorker,
  route
} from "../src/index.js"

type Cond = { readonly ready?: boolean; readonly serving?: boolean; readonly terminating?: boolean }
const condArb: fc.Arbitrary<Cond | undefined> = fc.option(
  fc.record({ ready: fc.boolean(), serving: fc.boolean(), terminating: fc.boolean() }, { requiredKeys: [] }),
  { nil: undefined }
)
type Op =
  | { readonly op: "pod"; readonly pod: number; readonly cond: Cond | undefined; readonly gone: boolean }
  | { readonly op: "route" }
  | { readonly op: "release"; readonly pick: number }
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("pod" as const), pod: fc.nat(4), cond: condArb, gone: fc.boolean() }),
  { arbitrary: fc.constant({ op: "route" as const }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat(1000) }), weight: 2 }
)

const sliceOf = (pods: ReadonlyMap<number, Cond | undefined>): V1EndpointSlice => ({
  metadata: { name: "engines-x" },
  addressType: "IPv4",
  ports: [{ name: "http", port: 8000, protocol: "TCP" }],
  endpoints: [...pods].map(([i, c]) => ({ addresses: [`10.0.0.${i}`], conditions: c }))
})

test.prop([fc.array(opArb, { minLength: 20, maxLength: 80 })], { numRuns: 150 })(
  "EndpointSlice changes under load: nothing lost, none counted twice, every count back to 0",
  (ops) => {
    let s = makeRouter(findPolicy("total-requests")!.make({}), [], {
      staleAfterSeconds: 5
    }) as RouterState<unknown>
    const pods = new Map<number, Cond | undefined>()
    let current = new Set<string>()
    const inFlight = new Map<string, string>()
    let now = 1
    let n = 0
    for (const o of ops) {
      now += 0.01
      if (o.op === "pod") {
        if (o.gone) pods.delete(o.pod)
        else pods.set(o.pod, o.cond)
        const want = new Set(endpointSliceWorkers([sliceOf(pods)], "http").urls)
        for (const url of want)
          if (!current.has(url)) {
            const r = addWorker(s, { url, dpSize: 2 }, now)
            expect("_tag" in r).toBe(false)
            if (!("_tag" in r)) s = r
          }
        for (const url of current) if (!want.has(url)) s = removeWorker(s, url, now)
        current = want
        s = compactWorkers(s, now)
      } else if (o.op === "route") {
        const id = `q${n++}`
        const r = route(s, { requestId: id, inputLength: 16 }, now)
        if (r._tag === "Routed") {
          s = r.state
          expect(current.has(r.decision.workerUrl)).toBe(true)
          inFlight.set(id, r.decision.workerUrl)
        }
      } else if (inFlight.size > 0) {
        const id = [...inFlight.keys()][o.pick % inFlight.size]!
        const r = finish(s, id, now)
        expect(r.found).toBe(true)
        s = r.state
        inFlight.delete(id)
      }
      expect(s.inflightPerRank.reduce((a, b) => a + b, 0)).toBe(inFlight.size)
      for (const [id, url] of inFlight) {
        const p = [...s.inflight].find(([k]) => k === id)![1]
        expect(s.heard.ranks[p.rank]!.workerUrl).toBe(url)
      }
    }
    for (const id of [...inFlight.keys()]) s = finish(s, id, now).state
    expect(s.inflightPerRank.every((x) => x === 0)).toBe(true)
    expect(
      compactWorkers(s, now)
        .heard.workers.map((w) => w.url)
        .sort()
    ).toEqual([...current].sort())
  }
)
