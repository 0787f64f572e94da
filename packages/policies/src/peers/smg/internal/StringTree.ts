/**
 * An immutable model of SMG's approximate char radix tree (`crates/kv_index/src/string_tree.rs`,
 * lightseekorg/smg 73da68ca): match and insert only (no eviction; LRU stamps only feed eviction).
 * Text is handled as Unicode scalar values (`Array.from(text)`). Insert copies the touched path.
 */

export interface TreeNode {
  readonly chars: ReadonlyArray<string>
  readonly children: ReadonlyMap<string, TreeNode>
  readonly tenants: ReadonlySet<string>
  readonly lastTenant: string | undefined
}

export const emptyTree = (urls: ReadonlyArray<string>): TreeNode => ({
  chars: [],
  children: new Map(),
  tenants: new Set(urls),
  lastTenant: undefined
})

const common = (a: ReadonlyArray<string>, b: ReadonlyArray<string>, from: number): number => {
  let k = 0
  while (k < a.length && from + k < b.length && a[k] === b[from + k]) k++
  return k
}

/** Longest match: matched char count and the match node's tenant (its `last_tenant` if still a tenant). */
export const matchTree = (
  root: TreeNode,
  text: ReadonlyArray<string>
): { readonly matched: number; readonly tenant: string | undefined } => {
  let node = root
  let i = 0
  let matched = 0
  while (i < text.length) {
    const child = node.children.get(text[i]!)
    if (child === undefined) break
    const sh = common(child.chars, text, i)
    matched += sh
    node = child
    if (sh < child.chars.length) break
    i += sh
  }
  const t = node.lastTenant
  return { matched, tenant: t !== undefined && node.tenants.has(t) ? t : undefined }
}

const withTenant = (n: TreeNode, url: string): TreeNode =>
  n.tenants.has(url) ? n : { ...n, tenants: new Set([...n.tenants, url]) }

const leaf = (chars: ReadonlyArray<string>, url: string): TreeNode => ({
  chars,
  children: new Map(),
  tenants: new Set([url]),
  lastTenant: url
})

/** Insert `text` for `url` below `node` (which already holds `url`), from char `i`. */
const insertBelow = (node: TreeNode, text: ReadonlyArray<string>, i: number, url: string): TreeNode => {
  if (i >= text.length) return node
  const key = text[i]!
  const child = node.children.get(key)
  const children = new Map(node.children)
  if (child === undefined) {
    children.set(key, leaf(text.slice(i), url))
    return { ...node, children }
  }
  const sh = common(child.chars, text, i)
  if (sh === child.chars.length) {
    children.set(key, insertBelow(withTenant(child, url), text, i + sh, url))
    return { ...node, children }
  }
  const rest: TreeNode = { ...child, chars: child.chars.slice(sh) }
  const midChildren = new Map<string, TreeNode>([[rest.chars[0]!, rest]])
  if (i + sh < text.length) midChildren.set(text[i + sh]!, leaf(text.slice(i + sh), url))
  const mid: TreeNode = {
    chars: child.chars.slice(0, sh),
    children: midChildren,
    tenants: new Set([...child.tenants, url]),
    lastTenant: child.lastTenant
  }
  children.set(key, mid)
  return { ...node, children }
}

export const insertTree = (root: TreeNode, text: ReadonlyArray<string>, url: string): TreeNode =>
  insertBelow(withTenant(root, url), text, 0, url)
