/**
 * Bounded work per byte for msgpack: no header may claim more elements or bytes than the input
 * holds (an `array32` header of 16M elements in a 40-byte payload would otherwise make
 * @msgpack/msgpack allocate them: 0.4 s, found by the fuzz suite).
 */
export const msgpackLimits = (bytes: Uint8Array) => ({
  maxArrayLength: bytes.length,
  maxMapLength: bytes.length,
  maxStrLength: bytes.length,
  maxBinLength: bytes.length,
  maxExtLength: bytes.length
})
