// Finds the top-level "id" of a JSON object from a prefix of it, without parsing the rest:
// an oversized request still deserves an error that names it, so its client does not wait forever.

export function peekId(prefix: string): string | number | null {
  let i = skipWs(prefix, 0)
  if (prefix[i] !== '{') return null
  i++
  for (;;) {
    i = skipWs(prefix, i)
    if (prefix[i] !== '"') return null
    const key = readString(prefix, i)
    if (!key) return null
    i = skipWs(prefix, key.end)
    if (prefix[i] !== ':') return null
    i = skipWs(prefix, i + 1)
    if (key.value === 'id') {
      if (prefix[i] === '"') {
        const v = readString(prefix, i)
        return v ? v.value : null
      }
      // The number must be followed by a delimiter: one cut by the end of the prefix could be longer.
      const m = /^-?\d{1,15}(?=[ \t\r\n,}])/.exec(prefix.slice(i, i + 17))
      return m ? Number(m[0]) : null
    }
    const next = skipValue(prefix, i)
    if (next < 0) return null
    i = skipWs(prefix, next)
    if (prefix[i] !== ',') return null
    i++
  }
}

function skipWs(s: string, i: number): number {
  while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++
  return i
}

function readString(s: string, i: number): { value: string; end: number } | undefined {
  let j = i + 1
  while (j < s.length) {
    const c = s[j]
    if (c === '\\') j += 2
    else if (c === '"') {
      try {
        return { value: JSON.parse(s.slice(i, j + 1)) as string, end: j + 1 }
      } catch {
        return undefined
      }
    } else j++
  }
  return undefined
}

/** Index just past the JSON value starting at i, or -1 if the prefix ends first. */
function skipValue(s: string, i: number): number {
  let depth = 0
  let j = i
  while (j < s.length) {
    const c = s[j]
    if (c === '"') {
      const str = readString(s, j)
      if (!str) return -1
      j = str.end
      if (depth === 0) return j
      continue
    }
    if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) return j + 1
      if (depth < 0) return -1
    } else if (depth === 0 && (c === ',' || c === '}')) return j
    j++
  }
  return -1
}
