/**
 * Workers from Kubernetes EndpointSlices, against a fake API server in this file: a local HTTP
 * server speaking the list + watch protocol of `discovery.k8s.io/v1` (a list with a
 * resourceVersion, then a stream of `{"type","object"}` lines), with the official client on the
 * other side. Then `startServe --workers-from k8s:...` routing to fake engines as pods come and go.
 */
import { once } from "node:events"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KubeConfig, type V1EndpointSlice } from "@kubernetes/client-node"
import { totalRequests } from "@loadledger/policies"
import { afterEach, describe, expect, it } from "vitest"
import {
  endpointSliceWorkers,
  parseServeArgs,
  type ServeArgs,
  startServe,
  watchWorkerEndpointSlices
} from "../src/index.js"
import { startFakeEngine } from "../src/testing/index.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
const until = async (cond: () => boolean, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

type Ep = {
  readonly ip: string
  readonly ready?: boolean
  readonly serving?: boolean
  readonly terminating?: boolean
}
const slice = (name: string, port: number, eps: ReadonlyArray<Ep>, rv = "1"): V1EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: {
    name,
    namespace: "llm",
    resourceVersion: rv,
    labels: { "kubernetes.io/service-name": "engines" }
  },
  addressType: "IPv4",
  ports: [{ name: "http", port, protocol: "TCP" }],
  endpoints: eps.map((e) => ({
    addresses: [e.ip],
    conditions: { ready: e.ready, serving: e.serving, terminating: e.terminating }
  }))
})

/** A fake API server: `slices` is what a list returns; `emit` sends a watch event to every watcher. */
const fakeApiServer = async () => {
  const slices = new Map<string, V1EndpointSlice>()
  const watchers = new Set<ServerResponse>()
  const seen: Array<string> = []
  let rv = 10
  let failLists = 0
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x")
    seen.push(`${u.pathname}?${u.searchParams.get("watch") ?? "list"}&${u.searchParams.get("labelSelector")}`)
    if (u.pathname !== "/apis/discovery.k8s.io/v1/namespaces/llm/endpointslices") {
      res.writeHead(404).end()
      return
    }
    if (u.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" })
      res.flushHeaders()
      watchers.add(res)
      res.on("close", () => watchers.delete(res))
      return
    }
    if (failLists > 0) {
      failLists--
      res.writeHead(500, { "content-type": "application/json" })
      res.end(JSON.stringify({ kind: "Status", code: 500, message: "etcd down" }))
      return
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(
      JSON.stringify({
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSliceList",
        metadata: { resourceVersion: String(rv) },
        items: [...slices.values()]
      })
    )
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const port = (server.address() as { port: number }).port
  const emit = (type: "ADDED" | "MODIFIED" | "DELETED", s: V1EndpointSlice) => {
    rv++
    const object = { ...s, metadata: { ...s.metadata, resourceVersion: String(rv) } }
    if (type === "DELETED") slices.delete(s.metadata!.name!)
    else slices.set(s.metadata!.name!, object)
    for (const w of watchers) w.write(`${JSON.stringify({ type, object })}\n`)
  }
  const config = new KubeConfig()
  config.loadFromClusterAndUser(
    { name: "fake", server: `http://127.0.0.1:${port}`, skipTLSVerify: true },
    { name: "u" }
  )
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    slices,
    seen,
    emit,
    failNextLists: (n: number) => {
      failLists = n
    },
    /** ends every watch as the API server does at its timeout (a clean end of the stream) */
    endWatches: () => {
      for (const w of watchers) w.end()
    },
    close: async () => {
      for (const w of watchers) w.destroy()
      server.close()
      server.closeAllConnections()
      await once(server, "close")
    }
  }
}

describe("endpointSliceWorkers", () => {
  it("reads conditions as the API defines them, ports by number or name, IPv6 in brackets", () => {
    const s = slice("a", 8000, [
      { ip: "10.0.0.1", ready: true },
      { ip: "10.0.0.2" }, // absent conditions: ready
      { ip: "10.0.0.3", ready: false, serving: false },
      { ip: "10.0.0.4", ready: false, serving: true, terminating: true }
    ])
    expect(endpointSliceWorkers([s], undefined)).toEqual({
      urls: ["http://10.0.0.1:8000", "http://10.0.0.2:8000"],
      errors: []
    })
    expect(endpointSliceWorkers([s], 8000).urls).toEqual(["http://10.0.0.1:8000", "http://10.0.0.2:8000"])
    expect(endpointSliceWorkers([s], "http").urls).toHaveLength(2)
    expect(endpointSliceWorkers([s], 80)).toEqual({
      urls: [],
      errors: ["EndpointSlice a: no port 80 (ports http:8000)"]
    })
    const v6: V1EndpointSlice = { ...slice("b", 30000, [{ ip: "fd00::1" }]), addressType: "IPv6" }
    expect(endpointSliceWorkers([v6], undefined).urls).toEqual(["http://[fd00::1]:30000"])
  })
  it("uses the serving terminating endpoints only when none is ready (kube-proxy, KEP-1669)", () => {
    const draining = slice("a", 1, [
      { ip: "10.0.0.4", ready: false, serving: true, terminating: true },
      { ip: "10.0.0.5", ready: false, serving: false, terminating: true }
    ])
    expect(endpointSliceWorkers([draining], undefined).urls).toEqual(["http://10.0.0.4:1"])
    expect(endpointSliceWorkers([draining, slice("b", 1, [{ ip: "10.0.0.9" }])], undefined).urls).toEqual([
      "http://10.0.0.9:1"
    ])
  })
})

describe("watchWorkerEndpointSlices against a fake API server", () => {
  it("lists, then follows ADDED / MODIFIED / DELETED; an ended watch resumes; a failed list keeps the set", async () => {
    const api = await fakeApiServer()
    cleanups.push(() => api.close())
    api.slices.set("engines-1", slice("engines-1", 8000, [{ ip: "10.0.0.1" }]))
    const sets: Array<ReadonlyArray<string>> = []
    const errors: Array<string> = []
    const w = watchWorkerEndpointSlices(
      { namespace: "llm", service: "engines" },
      (s) => sets.push(s),
      (m) => errors.push(m),
      { config: api.config, retryMs: 50 }
    )
    cleanups.push(() => w.close())
    await until(() => sets.length === 1, 5000, "first list")
    expect(sets[0]).toEqual(["http://10.0.0.1:8000"])
    expect(api.seen[0]).toBe(
      "/apis/discovery.k8s.io/v1/namespaces/llm/endpointslices?list&kubernetes.io/service-name=engines"
    )
    await until(() => api.seen.some((x) => x.includes("?true&")), 5000, "watching")
    api.emit("ADDED", slice("engines-2", 8000, [{ ip: "10.0.0.2" }]))
    await until(() => sets.length === 2, 5000, "added")
    expect(sets[1]).toEqual(["http://10.0.0.1:8000", "http://10.0.0.2:8000"])
    // a pod starts terminating: out of the set at once
    api.emit(
      "MODIFIED",
      slice("engines-1", 8000, [{ ip: "10.0.0.1", ready: false, serving: true, terminating: true }])
    )
    await until(() => sets.length === 3, 5000, "terminating")
    expect(sets[2]).toEqual(["http://10.0.0.2:8000"])
    // the API server ends the watch: the client watches again from its resourceVersion
    const watches = api.seen.filter((x) => x.includes("?true&")).length
    api.endWatches()
    await until(() => api.seen.filter((x) => x.includes("?true&")).length > watches, 5000, "rewatch")
    api.emit("DELETED", api.slices.get("engines-1")!)
    api.emit("ADDED", slice("engines-3", 9000, [{ ip: "10.0.0.3" }]))
    await until(
      () => sets.at(-1)?.length === 2 && sets.at(-1)?.[1] === "http://10.0.0.3:9000",
      5000,
      "after rewatch"
    )
    expect(sets.at(-1)).toEqual(["http://10.0.0.2:8000", "http://10.0.0.3:9000"])
    expect(errors).toEqual([])
    w.close()
  })

  it("a list that fails is reported and retried, and the set it had stays", async () => {
    const api = await fakeApiServer()
    cleanups.push(() => api.close())
    api.slices.set("engines-1", slice("engines-1", 8000, [{ ip: "10.0.0.1" }]))
    api.failNextLists(2)
    const sets: Array<ReadonlyArray<string>> = []
    const errors: Array<string> = []
    const w = watchWorkerEndpointSlices(
      { namespace: "llm", service: "engines", port: "http" },
      (s) => sets.push(s),
      (m) => errors.push(m),
      { config: api.config, retryMs: 30 }
    )
    cleanups.push(() => w.close())
    await until(() => sets.length === 1, 5000, "list after failures")
    expect(sets).toEqual([["http://10.0.0.1:8000"]]) // no empty set was reported for the failed lists
    expect(errors).toHaveLength(2)
    expect(errors[0]).toMatch(/^k8s llm\/engines: /)
  })
})

it("serve --workers-from k8s:llm/engines routes to the pods the API server lists, as they come and go", async () => {
  const [a, b] = await Promise.all([0, 1].map(() => startFakeEngine({ dpSize: 1 })))
  cleanups.push(async () => {
    await a!.close()
    await b!.close()
  })
  const api = await fakeApiServer()
  cleanups.push(() => api.close())
  const portOf = (u: string) => Number(new URL(u).port)
  api.slices.set("engines-a", slice("engines-a", portOf(a!.url), [{ ip: "127.0.0.1" }]))
  const dir = mkdtempSync(join(tmpdir(), "kube-"))
  const kubeconfig = join(dir, "config")
  writeFileSync(kubeconfig, api.config.exportConfig())
  const old = process.env.KUBECONFIG
  process.env.KUBECONFIG = kubeconfig
  cleanups.push(() => {
    if (old === undefined) delete process.env.KUBECONFIG
    else process.env.KUBECONFIG = old
  })
  const args = parseServeArgs([
    "--workers-from",
    "k8s:llm/engines",
    "--port",
    "0",
    "--interval-ms",
    "50"
  ]) as ServeArgs
  expect(args.workersK8s).toEqual({ namespace: "llm", service: "engines", port: undefined })
  const s = await startServe(args, totalRequests)
  cleanups.push(() => s.close())
  const known = () =>
    s.router
      .ranks()
      .filter((r) => r.condition === "known")
      .map((r) => r.id)
  await until(() => known().join() === `${a!.url}@0`, 5000, "a in")
  await until(() => api.seen.some((x) => x.includes("?true&")), 5000, "watching")
  api.emit("ADDED", slice("engines-b", portOf(b!.url), [{ ip: "127.0.0.1" }]))
  await until(() => known().length === 2, 5000, "b in")
  api.emit(
    "MODIFIED",
    slice("engines-a", portOf(a!.url), [{ ip: "127.0.0.1", terminating: true, ready: false }])
  )
  await until(() => s.router.ranks().length === 1, 5000, "a out")
  const post = () =>
    fetch(`${s.url}/v1/completions`, { method: "POST", body: JSON.stringify({ prompt: "hi" }) })
  for (let i = 0; i < 3; i++) expect((await post()).headers.get("x-loadledger-rank")).toBe(`${b!.url}@0`)
  expect(s.router.inflight()).toEqual([0])
})
