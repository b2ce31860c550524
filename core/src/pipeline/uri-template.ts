// Matches a URI against an RFC 6570 level-2 template: {var} is one path segment,
// {+var} is the rest (slashes included). Values are percent-decoded.

export function matchTemplate(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = []
  let pattern = '^'
  let last = 0
  for (const m of template.matchAll(/\{(\+?)([a-z0-9_]+)\}/g)) {
    pattern += escapeRegExp(template.slice(last, m.index))
    pattern += m[1] === '+' ? '(.+)' : '([^/?#]+)'
    names.push(m[2] as string)
    last = (m.index ?? 0) + m[0].length
  }
  pattern += escapeRegExp(template.slice(last)) + '$'
  const found = new RegExp(pattern).exec(uri)
  if (!found) return undefined
  const out: Record<string, string> = {}
  for (let i = 0; i < names.length; i++) {
    try {
      out[names[i] as string] = decodeURIComponent(found[i + 1] as string)
    } catch {
      return undefined
    }
  }
  return out
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
