/**
 * Rank-aware bootstrap rooms for PD routers: rooms whose residue modulo the DP size is the rank the
 * router intends, so SGLang's room-following placement spreads exactly as planned.
 *
 * @since 0.2.0
 */
import { type PolicyError, policyError } from "../Policy.js"

const two63 = 2n ** 63n

/**
 * A bootstrap room for SGLang's PD disaggregation whose residue modulo `dpSize` is `dpRank`, so
 * `follow-bootstrap-room` (which places a request on `room mod dpSize`) puts it exactly where the
 * PD router intended, while the room stays a random-looking 63-bit id.
 *
 * **When to use**: in a PD router that picks the DP rank itself and must tell the engine through the
 * room. Shape: `room = draw - (draw mod dpSize) + dpRank`, reduced into `[0, 2^63)`, as a decimal
 * string; `draw` is 63 random bits from your generator. Errors (typed): `InvalidInput` naming
 * `dpSize` (not a positive safe integer), `dpRank` (not in `[0, dpSize)`) or `draw`.
 *
 * Upstream: SGLang `python/sglang/srt/managers/data_parallel_controller.py`, FOLLOW_BOOTSTRAP_ROOM
 * (`bootstrap_room % dp_size`), see `fixtures/reference/sglang/README.md`.
 *
 * @example
 * ```ts
 * import { rankAwareBootstrapRoom } from "@loadledger/policies"
 * const room = rankAwareBootstrapRoom(5, 8, 1234567890123456789n)
 * typeof room === "string" && BigInt(room) % 8n // => 5n
 * const bad = rankAwareBootstrapRoom(8, 8, 1n)
 * typeof bad === "object" && bad.field // => "dpRank"
 * ```
 *
 * @category own policies
 * @since 0.3.0
 */
export const rankAwareBootstrapRoom = (
  dpRank: number,
  dpSize: number,
  draw: bigint
): string | PolicyError => {
  if (!Number.isSafeInteger(dpSize) || dpSize < 1)
    return policyError("InvalidInput", "dpSize must be a positive safe integer", "dpSize")
  if (!Number.isInteger(dpRank) || dpRank < 0 || dpRank >= dpSize)
    return policyError("InvalidInput", `dpRank must be an integer in [0, ${dpSize})`, "dpRank")
  if (draw < 0n || draw >= two63) return policyError("InvalidInput", "draw must be in [0, 2^63)", "draw")
  const n = BigInt(dpSize)
  let room = draw - (draw % n) + BigInt(dpRank)
  if (room >= two63) room -= n
  return room.toString()
}
