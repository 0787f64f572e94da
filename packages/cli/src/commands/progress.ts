/**
 * Progress for long commands: a live bar (cli-progress) on a terminal, one plain line every few
 * seconds on stderr otherwise (logs, CI, `2> file`), nothing with `--quiet`.
 *
 * @since 0.2.0
 */
/**
 * Where a run stands: `done` of `total` units (`unit`: "requests", "cells") after `elapsedSeconds`;
 * `label` says what is running now (e.g. `policy 2/5 total-tokens`).
 *
 * @category progress
 * @since 0.2.0
 */
export interface ProgressSnapshot {
  readonly done: number
  readonly total: number
  readonly unit: string
  readonly elapsedSeconds: number
  readonly label?: string | undefined
}

const duration = (s: number): string => {
  if (!Number.isFinite(s)) return "-"
  if (s < 60) return `${s.toFixed(1)}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(Math.round(s - m * 60)).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/**
 * Seconds left at the average pace so far; `undefined` before the first unit is done.
 *
 * @example
 * ```ts
 * import { etaSeconds } from "./progress.js"
 * etaSeconds({ done: 25, total: 100, unit: "requests", elapsedSeconds: 5 }) // => 15
 * etaSeconds({ done: 0, total: 100, unit: "requests", elapsedSeconds: 5 }) // => undefined
 * ```
 *
 * @category progress
 * @since 0.2.0
 */
export const etaSeconds = (s: ProgressSnapshot): number | undefined =>
  s.done <= 0 ? undefined : (s.elapsedSeconds * Math.max(0, s.total - s.done)) / s.done

/**
 * The one-line progress written to a non-terminal stderr: units done of total with the percentage,
 * what runs now, elapsed time and ETA.
 *
 * @example
 * ```ts
 * import { progressLine } from "./progress.js"
 * progressLine({ done: 1200, total: 8000, unit: "requests", elapsedSeconds: 4, label: "policy 1/2 round-robin" })
 * // => "progress: 1200/8000 requests (15.0%) | policy 1/2 round-robin | elapsed 4.0s | ETA 22.7s"
 * ```
 *
 * @category progress
 * @since 0.2.0
 */
export const progressLine = (s: ProgressSnapshot): string => {
  const pct = s.total > 0 ? ((100 * s.done) / s.total).toFixed(1) : "100.0"
  const eta = etaSeconds(s)
  return [
    `progress: ${s.done}/${s.total} ${s.unit} (${pct}%)`,
    ...(s.label ? [s.label] : []),
    `elapsed ${duration(s.elapsedSeconds)}`,
    `ETA ${eta === undefined ? "-" : duration(eta)}`
  ].join(" | ")
}

/**
 * A running progress display: `update(done, label?)` as work completes, `stop()` at the end.
 *
 * @category progress
 * @since 0.2.0
 */
export interface Progress {
  readonly update: (done: number, label?: string) => void
  readonly stop: () => void
}

/**
 * How to show progress: `total` units of `unit`; `mode` "bar" (a terminal), "lines" (one
 * {@link progressLine} every `intervalSeconds`, default 2, plus a closing line) or "off"
 * (`--quiet`, or output that must stay clean); `now()` is the clock in seconds (an argument so tests
 * drive it).
 *
 * @category progress
 * @since 0.2.0
 */
export interface ProgressOptions {
  readonly total: number
  readonly unit: string
  readonly mode: "bar" | "lines" | "off"
  readonly stream: { readonly write: (chunk: string) => unknown }
  readonly now: () => number
  readonly intervalSeconds?: number | undefined
}

/**
 * The progress mode for a command: "off" with `--quiet`, "bar" when stderr is a terminal, "lines"
 * on a non-terminal only when asked for (`--progress`), else "off" (a pipe or a log gets no
 * progress unless asked).
 *
 * @example
 * ```ts
 * import { progressMode } from "./progress.js"
 * progressMode({ quiet: false, isTTY: false, progress: true }) // => "lines"
 * progressMode({ quiet: false, isTTY: false }) // => "off"
 * progressMode({ quiet: true, isTTY: true }) // => "off"
 * ```
 *
 * @category progress
 * @since 0.2.0
 */
export const progressMode = (o: {
  readonly quiet: boolean
  readonly isTTY: boolean
  readonly progress?: boolean | undefined
}): "bar" | "lines" | "off" => (o.quiet ? "off" : o.isTTY ? "bar" : o.progress === true ? "lines" : "off")

/**
 * Start showing progress (see {@link ProgressOptions}). The simulator is synchronous, so no timer
 * could fire during a run: lines are written from `update` when `intervalSeconds` have passed
 * since the last one.
 *
 * **When to use**: any command that runs more than a second or two (`simulate`, `sweep`).
 *
 * @example
 * ```ts
 * import { startProgress } from "./progress.js"
 * let t = 0
 * let text = ""
 * const stream = { write: (s: string) => { text += s } }
 * const p = await startProgress({ total: 10, unit: "requests", mode: "lines", stream, now: () => t })
 * t = 2.5
 * p.update(5)
 * t = 3
 * p.update(10)
 * p.stop()
 * text
 * // => "progress: 5/10 requests (50.0%) | elapsed 2.5s | ETA 2.5s\ndone: 10/10 requests in 3.0s\n"
 * ```
 *
 * @category progress
 * @since 0.2.0
 */
export const startProgress = async (o: ProgressOptions): Promise<Progress> => {
  if (o.mode === "off") return { update: () => {}, stop: () => {} }
  if (o.mode === "bar") {
    const { SingleBar, Presets } = await import("cli-progress")
    const bar = new SingleBar(
      {
        format: `{bar} {percentage}% | {value}/{total} ${o.unit} | {label} | elapsed {duration_formatted} | ETA {eta_formatted}`,
        stream: o.stream as unknown as NodeJS.WriteStream,
        etaBuffer: 200
      },
      Presets.shades_classic
    )
    bar.start(o.total, 0, { label: "starting" })
    return {
      update: (done, label) => bar.update(done, label === undefined ? {} : { label }),
      stop: () => bar.stop()
    }
  }
  const interval = o.intervalSeconds ?? 2
  const start = o.now()
  let last = start
  let done = 0
  let label: string | undefined
  let stopped = false
  return {
    update: (d: number, l?: string) => {
      done = d
      if (l !== undefined) label = l
      const t = o.now()
      if (t - last >= interval) {
        last = t
        o.stream.write(
          `${progressLine({ done, total: o.total, unit: o.unit, elapsedSeconds: t - start, label })}\n`
        )
      }
    },
    stop: () => {
      if (stopped) return
      stopped = true
      o.stream.write(`done: ${done}/${o.total} ${o.unit} in ${duration(o.now() - start)}\n`)
    }
  }
}
