/**
 * Code-point order of two strings: Rust's `String` order (UTF-8 bytes, which is code-point order)
 * and Python's `str` order, where JavaScript's `<` compares UTF-16 units instead (they differ past
 * U+FFFF). Negative, zero or positive, for `Array.prototype.sort`.
 *
 * @internal
 */
export const byCodePoint = (a: string, b: string): number => {
  const x = [...a]
  const y = [...b]
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!
    if (d !== 0) return d
  }
  return x.length - y.length
}
