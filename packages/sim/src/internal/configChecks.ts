/**
 * The rules `checkConfig` (`Config.ts`) and the engines' own options (`engines/*`) check fields
 * with, and how a refused value is shown in the message.
 */
import type { ConfigProblem } from "../engines/Engine.js"

/** A value as a config message shows it. */
export const shown = (v: unknown): string =>
  typeof v === "number" || typeof v === "boolean" || v === undefined || v === null
    ? String(v)
    : typeof v === "function"
      ? "a function"
      : (JSON.stringify(v) ?? String(v))

/** `field must be <rule>, got <v>`. */
export const bad = (field: string, rule: string, v: unknown): ConfigProblem => ({
  field,
  message: `${field} must be ${rule}, got ${shown(v)}`
})

/** `v` is a safe integer >= `least`, else the problem naming `field`. */
export const integerAtLeast = (field: string, v: unknown, least: number): ConfigProblem | undefined =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= least
    ? undefined
    : bad(field, `an integer >= ${least}`, v)
