// Help text in two columns (a name, then its description wrapped beside it), as every command's
// --help prints it: one layout for ag-mcp, its commands and ag-server.

/** Words wrapped to lines of at most `width` columns (a longer word stands alone). */
export function wrap(text: string, width: number): string {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  if (line !== '') lines.push(line)
  return lines.join('\n')
}

/** Rows of [left, right]: the right column starts where the longest left ends (at most 32 columns in). */
export function columns(rows: readonly (readonly [string, string])[], width = 100): string {
  const left = Math.min(32, Math.max(0, ...rows.map(([l]) => l.length))) + 4
  return rows
    .map(([l, r]) => {
      const head = `  ${l}`
      if (r === '') return head
      const pad = head.length + 2 <= left ? ' '.repeat(left - head.length) : `\n${' '.repeat(left)}`
      return `${head}${pad}${wrap(r, width - left).replace(/\n/g, `\n${' '.repeat(left)}`)}`
    })
    .join('\n')
}
