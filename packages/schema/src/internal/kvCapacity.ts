/**
 * The wire schema of a rank's KV-cache capacity fields (all optional, snake_case on the wire), shared by the decoders that read them.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { allOptional, wireStruct } from "./wire.js"

/**
 * The Schema of the `kv_capacity` section (not exported as a value: read it through
 * `LoadEntryV3`; its type is exported as {@link KvCapacityMetrics}).
 */
export const KvCapacitySchema = wireStruct(
  allOptional({
    fullAvailableTokens: Schema.Int,
    fullEvictableTokens: Schema.Int,
    swaAvailableTokens: Schema.Int,
    swaEvictableTokens: Schema.Int,
    mambaAvailableSlots: Schema.Int,
    mambaEvictableSlots: Schema.Int,
    requestSlotsAvailable: Schema.Int
  })
)
