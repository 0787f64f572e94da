/**
 * The identity of a worker URL: which spellings name the same worker.
 *
 * @internal
 */

const parts = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s

/**
 * The key two worker URLs share exactly when they name the same worker: the scheme and the host
 * lower-cased (both are case-insensitive: RFC 3986 section 3.1, and RFC 4343 for DNS names), user
 * info, port and path kept as given, trailing slashes dropped (`http://A:1/` and `http://a:1` are
 * one worker; `http://a:1/X` and `http://a:1/x` are two). A string that is not `scheme://...` is
 * only stripped of trailing slashes. O(length).
 *
 * @internal
 */
export const workerKey = (url: string): string => {
  const trimmed = url.replace(/\/+$/, "")
  const m = parts.exec(trimmed)
  if (m === null) return trimmed
  const authority = m[2]!
  const at = authority.lastIndexOf("@")
  const userinfo = at < 0 ? "" : authority.slice(0, at + 1)
  return `${m[1]!.toLowerCase()}${userinfo}${authority.slice(at + 1).toLowerCase()}${m[3]!}`
}
