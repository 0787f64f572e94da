/**
 * The one place @loadledger/live touches @loadledger/schema's decoders.
 *
 * Contract used (issue 2): `decodeLedger(input, kind) => Result<ReadonlyArray<LedgerRow>, DecodeError>`
 * with absent fields omitted (never 0), and rows the decoder rejected (duplicate rank, negative count)
 * carrying `unknown` and no load fields.
 */
import {
  type DecodeError,
  type LedgerKind,
  type LedgerRow,
  decodeLedger as schemaDecodeLedger
} from "@loadledger/schema"
import { Result } from "effect"

export type { DecodeError, LedgerKind, LedgerRow } from "@loadledger/schema"

/** The decoder signature the live router depends on. */
export type DecodeLedger = (
  input: string | Uint8Array,
  kind?: LedgerKind
) => Result.Result<ReadonlyArray<LedgerRow>, Pick<DecodeError, "message"> & { readonly _tag: string }>

/** Decode one fetched body to ledger rows with @loadledger/schema; a decoder that throws is a failure. */
export const decodeLedger: DecodeLedger = (input, kind = "auto") => {
  try {
    return schemaDecodeLedger(input, kind)
  } catch (e) {
    return Result.fail({ _tag: "DecoderThrew", message: e instanceof Error ? e.message : String(e) })
  }
}
