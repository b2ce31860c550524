// The reasoning a proposal carries: the agent's own words, then (when agit was on) the AGIT thought
// log it staged, `AGIT thoughts (N):` and one `[HH:MM:SS] role/category: content` line per thought
// (plugins/agit/attach.ts writes it; a content's further lines follow its first).

export interface Thought {
  time: string
  role: string
  category: string
  content: string
}

export interface Reasoning {
  text: string
  thoughts: Thought[]
  /** A continuity handoff pasted into the reasoning (it starts with `Task handoff`). */
  handoff: string | undefined
}

const MARK = /(?:^|\n)AGIT thoughts \((\d+)\):\n/
const LINE = /^\[(\d\d:\d\d:\d\d)\] (user|ai)\/([a-z]+): ?(.*)$/
const HANDOFF = /(?:^|\n\n)(Task handoff\n[\s\S]*?)(?=\n\n[^\s]|$)/

export function splitReasoning(all: string): Reasoning {
  let text = all
  const thoughts: Thought[] = []
  const m = MARK.exec(all)
  if (m) {
    text = all.slice(0, m.index)
    let current: Thought | undefined
    for (const line of all.slice(m.index + m[0].length).split('\n')) {
      const t = LINE.exec(line)
      if (t) {
        current = { time: t[1] as string, role: t[2] as string, category: t[3] as string, content: t[4] as string }
        thoughts.push(current)
      } else if (current) current.content += `\n${line}`
    }
  }
  let handoff: string | undefined
  const hm = HANDOFF.exec(text)
  if (hm) {
    handoff = hm[1]
    text = (text.slice(0, hm.index) + text.slice(hm.index + hm[0].length)).trim()
  }
  return { text: text.trim(), thoughts, handoff }
}
