// The nearest of some known names to a misspelt one, for "did you mean" in usage errors. A leaf
// module with no imports, shared by ag-mcp (core) and ag-server, which may not import each other.

/** The candidate nearest to `name` (edit distance at most a third of its length, at least 1), if any. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1
  for (const c of candidates) {
    const d = editDistance(name, c)
    if (d < bestDistance) [best, bestDistance] = [c, d]
  }
  return best
}

/**
 * Levenshtein distance where swapping two adjacent letters is one edit, not two (optimal string
 * alignment): `--prot` is one slip from `--port`, and a typist's most common one.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = []
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1)
      cur[j] = d
    }
    before = prev
    prev = cur
  }
  return prev[b.length] ?? 0
}
