/**
 * The worker-thread entry of `loadledger sweep`: tinypool calls the default export with one cell.
 *
 * @since 0.2.0
 */
import { type AnyCellResult, runAnyCell } from "./run.js"
import type { Cell } from "./SpecTypes.js"

export default (cell: Cell): AnyCellResult => runAnyCell(cell)
