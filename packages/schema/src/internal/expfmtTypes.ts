/**
 * What the exposition parser (`expfmtParse.ts`) returns: the samples it was asked to keep, the
 * declared families, a count of every other series, and its notes.
 */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
  readonly line: number
  /** Epoch seconds: 0.0.4's integer milliseconds / 1000, or OpenMetrics' float seconds. */
  readonly timestamp?: number | undefined
}

export interface Family {
  readonly name: string
  readonly type?: string | undefined
  readonly help?: string | undefined
  readonly line: number
}

/** Samples of one metric name that were not kept (not modelled): counted, never materialised. */
export interface OtherSeries {
  readonly name: string
  samples: number
  /** 1-based line of its first sample. */
  readonly line: number
  /** The values of each of the parser's `rankLabels` seen on its samples. */
  readonly ranks: Map<string, Set<string>>
}

/**
 * What the parser read but a caller should hear about:
 * - `underflow`: a kept sample's value is a non-zero decimal below the smallest float64
 *   (`1e-400`), read as 0 (as Go's `strconv.ParseFloat` does: the reference parser takes it
 *   silently);
 * - `after-eof`: an OpenMetrics `# EOF` line ends the page, and `lines` non-blank lines from
 *   `line` follow it: they were not read (a second page pasted after it, or a broken exporter).
 */
export type ExpositionNote =
  | { readonly kind: "underflow"; readonly name: string; readonly line: number; readonly text: string }
  | { readonly kind: "after-eof"; readonly line: number; readonly lines: number }

export interface Exposition {
  /** The kept samples (all of them when the parse had no `keep`), in text order. */
  readonly samples: ReadonlyArray<Sample>
  /** Metric families declared by `# HELP` / `# TYPE` lines, by name. */
  readonly declared: ReadonlyMap<string, Family>
  /** Samples not kept, by metric name (empty when the parse had no `keep`). */
  readonly others: ReadonlyMap<string, OtherSeries>
  readonly notes: ReadonlyArray<ExpositionNote>
  /** Whether the text is OpenMetrics (it has a `# EOF` line). */
  readonly openMetrics: boolean
}

export interface ParseOptions {
  /** Which metric names to materialise as samples (the modelled ones); default: every name. */
  readonly keep?: ((name: string) => boolean) | undefined
  /** Labels whose values are collected for the samples not kept (the rank labels). */
  readonly rankLabels?: ReadonlyArray<string> | undefined
  /**
   * Whether a kept series (name + label set) seen twice is an `AmbiguousSeries` error, as the
   * decoders want (never last-writer-wins). Off by default, as in the reference parser, which
   * takes repeats (a federated page may hold one series at several timestamps).
   */
  readonly ambiguous?: boolean | undefined
}
