// A separate process for the concurrency test: `append <dir> <id> <n>` logs n thoughts one call
// at a time; `link <dir> <k>` makes k git commits, each linking what is pending at that moment.
import { execFileSync } from 'node:child_process'
import { AgitRepo } from '../../../plugins/agit/repo.ts'

const [mode, dir, a, b] = process.argv.slice(2) as [string, string, string, string | undefined]
const repo = new AgitRepo(dir)
if (mode === 'append') {
  for (let i = 0; i < Number(b); i++)
    await repo.append([{ role: 'ai', category: 'reasoning', content: `w${a}-${i} ${'é'.repeat(i % 7)}`, timestamp: i }])
} else if (mode === 'link') {
  for (let k = 0; k < Number(a); k++) {
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', `link ${k}`], { cwd: dir })
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()
    await repo.linkPending(head)
    await new Promise((r) => setTimeout(r, 30))
  }
}
