// A git patch parsed into the rows the diff view shows (pure: no DOM).

export type RowKind = 'hunk' | 'ctx' | 'add' | 'del' | 'note'
export interface Row {
  kind: RowKind
  old?: number
  new?: number
  text: string
}

export function parsePatch(patch: string): Row[] {
  const rows: Row[] = []
  let o = 0
  let n = 0
  let inHunk = false
  const lines = patch.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (hunk) {
      o = Number(hunk[1])
      n = Number(hunk[2])
      inHunk = true
      rows.push({ kind: 'hunk', text: line })
    } else if (!inHunk) {
      // The header: only what a reviewer needs (modes, a rename's similarity).
      if (/^(old mode|new mode|deleted file mode|new file mode|similarity index|rename from|rename to)/.test(line))
        rows.push({ kind: 'note', text: line })
    } else if (line.startsWith('+')) rows.push({ kind: 'add', new: n++, text: line.slice(1) })
    else if (line.startsWith('-')) rows.push({ kind: 'del', old: o++, text: line.slice(1) })
    else if (line.startsWith('\\')) rows.push({ kind: 'note', text: line })
    else rows.push({ kind: 'ctx', old: o++, new: n++, text: line.slice(1) })
  }
  return rows
}
