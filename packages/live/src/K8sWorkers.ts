/**
 * Workers from Kubernetes: the EndpointSlices of a Service (`discovery.k8s.io/v1`), listed and
 * watched with the official client (`@kubernetes/client-node`'s `ListWatch`), read as worker URLs.
 *
 * Conditions follow the EndpointSlice API (`ready` and `serving` absent mean true, `terminating`
 * absent means false): a worker is one endpoint that is ready and not terminating; when none is,
 * the serving terminating ones are used (as kube-proxy does, KEP-1669 "ProxyTerminatingEndpoints"),
 * so a rollout that leaves only draining pods does not empty the set. A pod leaving the set is
 * removed by `startServe` like any worker: nothing new placed on it, what is in flight still counted.
 *
 * @since 0.4.0
 */
import type { KubeConfig, V1EndpointSlice } from "@kubernetes/client-node"
import type { WorkerWatch } from "./WorkerWatch.js"

/**
 * Which Service's endpoints: its namespace and name, and the port (a number, a port name, or
 * absent: the slice's only port).
 *
 * @category models
 * @since 0.4.0
 */
export interface K8sService {
  readonly namespace: string
  readonly service: string
  readonly port?: number | string | undefined
}

const portOf = (
  slice: V1EndpointSlice,
  want: K8sService["port"]
): { readonly port: number; readonly https: boolean } | { readonly error: string } => {
  const ports = (slice.ports ?? []).filter((p) => p.port !== undefined && (p.protocol ?? "TCP") === "TCP")
  const shown = ports.map((p) => `${p.name ?? ""}:${p.port}`).join(", ") || "none"
  const p =
    want === undefined
      ? ports.length === 1
        ? ports[0]
        : undefined
      : ports.find((x) => (typeof want === "number" ? x.port === want : x.name === want))
  if (p === undefined)
    return {
      error: `EndpointSlice ${slice.metadata?.name ?? "?"}: ${
        want === undefined ? "several ports, name one" : `no port ${want}`
      } (ports ${shown})`
    }
  return { port: p.port!, https: p.appProtocol === "https" || p.name === "https" }
}

/**
 * The worker URLs of a Service's EndpointSlices (sorted, each once) and one line per slice that
 * could not be read (no matching port). Pure: what `watchWorkerEndpointSlices` reports each time.
 *
 * @example
 * ```ts
 * import { endpointSliceWorkers } from "@loadledger/live"
 * const slice = {
 *   metadata: { name: "engines-x1" },
 *   addressType: "IPv4",
 *   ports: [{ name: "http", port: 8000, protocol: "TCP" }],
 *   endpoints: [
 *     { addresses: ["10.0.0.5"], conditions: { ready: true } },
 *     { addresses: ["10.0.0.6"], conditions: { ready: false, serving: true, terminating: true } },
 *     { addresses: ["10.0.0.7"] }
 *   ]
 * }
 * endpointSliceWorkers([slice], undefined) // => { urls: ["http://10.0.0.5:8000", "http://10.0.0.7:8000"], errors: [] }
 * endpointSliceWorkers([slice], "grpc").errors // => ["EndpointSlice engines-x1: no port grpc (ports http:8000)"]
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const endpointSliceWorkers = (
  slices: ReadonlyArray<V1EndpointSlice>,
  port: K8sService["port"]
): { readonly urls: ReadonlyArray<string>; readonly errors: ReadonlyArray<string> } => {
  const ready = new Set<string>()
  const draining = new Set<string>()
  const errors: Array<string> = []
  for (const slice of slices) {
    const p = portOf(slice, port)
    if ("error" in p) {
      if ((slice.endpoints ?? []).length > 0) errors.push(p.error)
      continue
    }
    for (const e of slice.endpoints ?? []) {
      const address = e.addresses?.[0] // the API: addresses are fungible, use the first
      if (address === undefined) continue
      const host = slice.addressType === "IPv6" ? `[${address}]` : address
      const url = `${p.https ? "https" : "http"}://${host}:${p.port}`
      const c = e.conditions ?? {}
      if (c.ready !== false && c.terminating !== true) ready.add(url)
      else if (c.serving !== false && c.terminating === true) draining.add(url)
    }
  }
  return { urls: [...(ready.size > 0 ? ready : draining)].sort(), errors }
}

/**
 * Watch the EndpointSlices of `target` (label `kubernetes.io/service-name`) through the API server
 * of `config` (default: `KubeConfig.loadFromDefault()`: `$KUBECONFIG`, `~/.kube/config` or the
 * in-cluster service account). `onSet` gets the worker URLs (see `endpointSliceWorkers`) each time
 * they changed; `onError` a line for a slice without the port, or when the list or watch fails (the
 * last set stays; the watch starts again after `retryMs`, doubling up to 30 s).
 *
 * @example
 * ```ts
 * import { KubeConfig } from "@kubernetes/client-node"
 * import { watchWorkerEndpointSlices } from "@loadledger/live"
 * const errors: Array<string> = []
 * const config = new KubeConfig()
 * config.loadFromClusterAndUser({ name: "none", server: "http://127.0.0.1:9", skipTLSVerify: true }, { name: "u" })
 * const w = watchWorkerEndpointSlices({ namespace: "default", service: "engines" }, () => {}, (m) => errors.push(m), { config })
 * await new Promise((r) => setTimeout(r, 300))
 * w.close()
 * errors[0]?.startsWith("k8s default/engines:") // => true
 * ```
 *
 * @category constructors
 * @since 0.4.0
 */
export const watchWorkerEndpointSlices = (
  target: K8sService,
  onSet: (urls: ReadonlyArray<string>) => void,
  onError: (message: string) => void,
  options: { readonly config?: KubeConfig | undefined; readonly retryMs?: number | undefined } = {}
): WorkerWatch => {
  let closed = false
  let last: string | undefined
  let stop: (() => void) | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let delay = options.retryMs ?? 1000
  const name = `k8s ${target.namespace}/${target.service}`
  const start = async () => {
    // the client is loaded only by those who watch Kubernetes
    const k8s = await import("@kubernetes/client-node")
    if (closed) return
    const config = options.config ?? new k8s.KubeConfig()
    if (options.config === undefined) config.loadFromDefault()
    const api = config.makeApiClient(k8s.DiscoveryV1Api)
    const selector = `kubernetes.io/service-name=${target.service}`
    const path = `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(target.namespace)}/endpointslices`
    const informer = new k8s.ListWatch<V1EndpointSlice>(
      path,
      new k8s.Watch(config),
      () => api.listNamespacedEndpointSlice({ namespace: target.namespace, labelSelector: selector }),
      false,
      selector
    )
    const changed = () => {
      if (closed) return
      delay = options.retryMs ?? 1000
      const { urls, errors } = endpointSliceWorkers(informer.list(target.namespace), target.port)
      for (const e of errors) onError(`${name}: ${e}`)
      const key = urls.join("\n")
      if (key !== last) {
        last = key
        onSet(urls)
      }
    }
    let failed = false
    const run = async () => {
      failed = false
      try {
        await informer.start()
      } catch (e) {
        failed = true
        onError(`${name}: ${(e as Error).message}`)
      }
      if (!failed) changed() // an empty first list is a set too; a failed one is not
    }
    informer.on("change", changed)
    informer.on("error", (err?: unknown) => {
      failed = true
      if (closed) return
      const e = err as { message?: string } | undefined
      onError(`${name}: ${e?.message ?? String(err)}`)
      timer = setTimeout(() => void run(), delay)
      timer.unref()
      delay = Math.min(delay * 2, 30_000)
    })
    stop = () => void informer.stop()
    await run()
  }
  void start().catch((e) => onError(`${name}: ${(e as Error).message}`))
  return {
    close: () => {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      stop?.()
    }
  }
}
