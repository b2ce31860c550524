// AGIT's deterministic texts: the summary synthesized without an LLM, the trace, and the
// shortening rules. AGIT cuts by bytes (and can split a UTF-8 character); we cut by code points.
import type { Entry } from './entry.ts'

/** At most `max` code points: the first `max - suffix.length` followed by `suffix`. Never splits a character. */
export function truncateChars(s: string, max: number, suffix = '...'): string {
  const chars = Array.from(s)
  if (chars.length <= max) return s
  return chars.slice(0, Math.max(0, max - suffix.length)).join('') + suffix
}

/** `Intent: I. Plan: P.` from the last user intent and the last ai reasoning (AGIT's synthesizer). */
export function synthesizeSummary(entries: readonly Entry[]): string {
  const last = (role: string, category: string): string | undefined => {
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i] as Entry
      if (e.role === role && e.category === category) return truncateChars(e.content.trim(), 200)
    }
    return undefined
  }
  const intent = last('user', 'intent')
  const plan = last('ai', 'reasoning')
  if (intent !== undefined && plan !== undefined) return `Intent: ${intent}. Plan: ${plan}.`
  if (intent !== undefined) return `Intent: ${intent}.`
  if (plan !== undefined) return `Plan: ${plan}.`
  return 'Manual update.'
}

/** One line per entry, `[HH:MM:SS] role/category: content` in UTC, joined by newlines. */
export function formatTrace(entries: readonly Entry[]): string {
  return entries
    .map((e) => `[${new Date(e.timestamp * 1000).toISOString().slice(11, 19)}] ${e.role}/${e.category}: ${e.content}`)
    .join('\n')
}

/** A trace's lines back into thoughts (search over committed entries). A line that does not start
 *  like an entry continues the previous one (content may hold newlines). */
export function parseTrace(trace: string): Array<Pick<Entry, 'role' | 'category' | 'content'>> {
  const out: Array<Pick<Entry, 'role' | 'category' | 'content'>> = []
  let current: (typeof out)[number] | undefined
  for (const line of trace.split('\n')) {
    const m = /^\[\d\d:\d\d:\d\d\] (user|ai)\/(intent|reasoning|error|note): ?(.*)$/.exec(line)
    if (m) {
      current = { role: m[1] as string, category: m[2] as string, content: m[3] as string }
      out.push(current)
    } else if (current) current.content += `\n${line}`
  }
  return out
}

/** `YYYY-MM-DD HH:MM:SS UTC`. */
export function utcDateTime(unixSeconds: number): string {
  return `${new Date(unixSeconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}
