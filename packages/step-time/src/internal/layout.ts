/**
 * The joint parameter vector of a fit over several measurement stacks: the GPU's `NG`
 * parameters (efficiencies, collective latency) once, then `NS` per stack (per-layer,
 * per-request, per-step and eager overheads). A row's stack is its `source`: a serving stack's
 * whole steps (`splitwise`) carry that stack's CPU and launch costs, a kernel profiler's rows
 * (`vidur`) only GPU kernel time, so overheads are fitted per stack and efficiencies per GPU.
 * Collectives depend on GPU parameters only.
 */
import type { CalibrationSample } from "../CalibrationTypes.js"
import type { Efficiencies } from "../Efficiencies.js"
import { type Priors, priorCentres } from "../Priors.js"
import {
  evalPrepared,
  features,
  fromTheta,
  lower,
  NG,
  NP,
  NS,
  type ParameterName,
  type Prepared,
  parameterNames,
  prepare,
  toTheta
} from "./theta.js"

/** The stack of rows that carry no `source`. */
export const unspecifiedStack = "unspecified"

/** The stack whose overheads a row depends on (`undefined`: collectives, GPU parameters only). */
export const stackOf = (s: CalibrationSample): string | undefined =>
  s.kind === "all-reduce" || s.kind === "send-recv" ? undefined : (s.source ?? unspecifiedStack)

export interface Layout {
  readonly stacks: ReadonlyArray<string>
  readonly size: number
}

/** Stacks in order of first appearance among the rows. */
export const layoutOf = (samples: ReadonlyArray<CalibrationSample>): Layout => {
  const stacks = [...new Set(samples.map(stackOf).filter((s): s is string => s !== undefined))]
  return { stacks, size: NG + NS * stacks.length }
}

export interface Row {
  readonly p: Prepared
  /** Start of the row's stack block in the joint vector; undefined for collectives. */
  readonly block: number | undefined
}

export const rowOf = (layout: Layout, s: CalibrationSample): Row => {
  const stack = stackOf(s)
  return {
    p: prepare(s),
    block: stack === undefined ? undefined : NG + NS * layout.stacks.indexOf(stack)
  }
}

/** The row's own 8-parameter theta, taken from the joint vector. */
export const rowTheta = (r: Row, joint: ReadonlyArray<number>): Array<number> => {
  const t = joint.slice(0, NG)
  if (r.block === undefined) for (let i = NG; i < NP; i++) t.push(lower[i]!)
  else for (let i = 0; i < NS; i++) t.push(joint[r.block + i]!)
  return t
}

export const evalRow = (r: Row, joint: ReadonlyArray<number>): number => evalPrepared(r.p, rowTheta(r, joint))

/** d(seconds)/d(joint_i): the row's own derivatives scattered into the joint vector. */
export const jointFeatures = (r: Row, joint: ReadonlyArray<number>, size: number): Array<number> => {
  const f = features(r.p, rowTheta(r, joint))
  const out = new Array<number>(size).fill(0)
  for (let i = 0; i < NG; i++) out[i] = f[i]!
  if (r.block !== undefined) for (let i = 0; i < NS; i++) out[r.block + i] = f[NG + i]!
  return out
}

/** The joint vector of `gpu` parameters and each stack's (a stack absent from `byStack` takes `gpu`'s). */
export const jointOf = (
  layout: Layout,
  gpu: Partial<Efficiencies>,
  byStack?: Readonly<Record<string, Partial<Efficiencies>>>
): Array<number> => {
  const joint = toTheta(gpu).slice(0, NG)
  for (const s of layout.stacks)
    joint.push(
      ...toTheta({ ...gpu, ...(byStack !== undefined && Object.hasOwn(byStack, s) ? byStack[s] : {}) }).slice(
        NG
      )
    )
  return joint
}

/** Each stack's full parameters (the GPU's and its own) from the joint vector. */
export const stacksOf = (layout: Layout, joint: ReadonlyArray<number>): Record<string, Efficiencies> =>
  Object.fromEntries(
    layout.stacks.map((s, k) => [
      s,
      fromTheta([...joint.slice(0, NG), ...joint.slice(NG + NS * k, NG + NS * (k + 1))])
    ])
  )

/** Lower bounds, prior centres and spreads over the joint vector. */
export const jointLower = (layout: Layout): Array<number> => [
  ...lower.slice(0, NG),
  ...layout.stacks.flatMap(() => lower.slice(NG))
]

export const jointPrior = (
  layout: Layout,
  priors: Priors
): { readonly centre: Array<number>; readonly sd: Array<number> } => {
  const centre = jointOf(layout, priorCentres(priors))
  const sd = centre.map((c, i) => priors[nameAt(i)].relativeSd * c)
  return { centre, sd }
}

/** The parameter at joint index i, and the stack it belongs to (undefined: the GPU's). */
export const nameAt = (i: number): ParameterName => parameterNames[i < NG ? i : NG + ((i - NG) % NS)]!
export const stackAt = (layout: Layout, i: number): string | undefined =>
  i < NG ? undefined : layout.stacks[Math.floor((i - NG) / NS)]
