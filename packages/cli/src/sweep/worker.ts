/**
 * The worker-thread entry of `loadledger sweep`: tinypool calls the default export with one cell.
 *
 * @since 0.2.0
 */
import { type CellResult, runCell } from "./runCell.js"
import type { Cell } from "./Spec.js"

export default (cell: Cell): CellResult => runCell(cell)
