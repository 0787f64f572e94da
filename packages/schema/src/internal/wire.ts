/**
 * Wire-name helpers of the schemas: camelCase <-> snake_case (types and values), a `Schema.Struct` whose fields are renamed to their wire keys, and field defaults / optionality applied to a whole field set.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** camelCase -> snake_case at the type level (`kvTransferSpeedGbS` -> `kv_transfer_speed_gb_s`). */
export type Snake<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}`
  : S

/** camelCase -> snake_case at run time; the wire names of SGLang and vLLM are plain snake_case. */
export const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** snake_case -> camelCase. */
export const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

type SnakeMap<F> = { readonly [K in keyof F]: K extends string ? Snake<K> : K }

/**
 * A Struct whose Type side uses camelCase keys and whose Encoded (wire) side uses the same keys in
 * snake_case. Unknown wire keys are ignored on decode (effect's default `onExcessProperty`).
 */
export const wireStruct = <const F extends Schema.Struct.Fields>(fields: F) => {
  const mapping: Record<string, string> = {}
  for (const k of Object.keys(fields)) mapping[k] = snake(k)
  return Schema.Struct(fields).pipe(Schema.encodeKeys(mapping as unknown as SnakeMap<F>))
}

/** A struct key that takes `value` when the wire object lacks it (the upstream dataclass default). */
export const withDefault =
  <S extends Schema.Top>(value: S["Encoded"]) =>
  (schema: S) =>
    schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

/** Every field gets its upstream default when the wire key is missing. */
export const allWithDefaults = <const F extends Record<string, Schema.Constraint>>(
  fields: F,
  defaults: { readonly [K in keyof F]: F[K]["Encoded"] }
): { readonly [K in keyof F]: Schema.withDecodingDefaultKey<F[K]> } => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(fields)) {
    out[k] = Schema.withDecodingDefaultKey(Effect.succeed(defaults[k]))(fields[k] as F[string])
  }
  return out as { readonly [K in keyof F]: Schema.withDecodingDefaultKey<F[K]> }
}

/** Every field becomes an optional key: absent on the wire stays absent. */
export const allOptional = <const F extends Record<string, Schema.Constraint>>(
  fields: F
): { readonly [K in keyof F]: Schema.optionalKey<F[K]> } => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(fields)) out[k] = Schema.optionalKey(fields[k]!)
  return out as { readonly [K in keyof F]: Schema.optionalKey<F[K]> }
}
