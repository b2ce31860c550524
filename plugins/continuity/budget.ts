// Token budgets: Agentpack's presets and its estimate (≈ characters ÷ 4), and packing
// markdown sections into a budget — required sections are clipped, optional ones omitted
// (and named, with what to do instead).

export const PRESETS = { quick: 1200, chat: 4000, agent: 8000, deep: 16000 } as const
export type Preset = keyof typeof PRESETS
export const PRESET_NAMES = Object.keys(PRESETS) as Preset[]
export const DEFAULT_BUDGET = 4000

/** `budget` wins, then `preset`, then the pack's default. */
export function resolveBudget(
  o: { budget?: number | undefined; preset?: Preset | undefined },
  fallback = DEFAULT_BUDGET,
): number {
  if (o.budget !== undefined && o.budget > 0) return Math.trunc(o.budget)
  if (o.preset) return PRESETS[o.preset]
  return fallback
}

export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4))
}

const CLIP_MARK = '\n\n[Truncated to fit budget]'

export function clipToTokens(text: string, tokens: number): string {
  const max = Math.max(0, tokens * 4)
  if (text.length <= max) return text
  if (CLIP_MARK.length >= max) return text.slice(0, max).trimEnd()
  const room = max - CLIP_MARK.length
  const cut = text.slice(0, room)
  const nl = cut.lastIndexOf('\n')
  return `${cut.slice(0, nl > room * 0.65 ? nl : room).trimEnd()}${CLIP_MARK}`
}

export interface Section {
  title: string
  text: string
  required?: boolean
}

export interface Packed {
  markdown: string
  omitted: string[]
  truncated: string[]
}

export function packSections(
  header: string,
  sections: readonly Section[],
  budget: number,
  guidance: Record<string, string> = {},
): Packed {
  const omitted: string[] = []
  const truncated: string[] = []
  let out = header.trimEnd()
  let used = estimateTokens(out)
  for (const s of sections) {
    const need = estimateTokens(s.text)
    const left = budget - used
    if (left <= 20) omitted.push(s.title)
    else if (need <= left) {
      out += `\n\n${s.text.trimEnd()}`
      used += need
    } else if (s.required) {
      out += `\n\n${clipToTokens(s.text, left)}`
      truncated.push(s.title)
      used = estimateTokens(out)
    } else omitted.push(s.title)
  }
  if (omitted.length > 0) {
    const full = `\n\n## Omitted For Budget\n${omitted.map((t) => (guidance[t] ? `- ${t}: ${guidance[t]}` : `- ${t}`)).join('\n')}`
    const compact = `\n\n## Omitted For Budget\n- ${omitted.join(', ')}`
    if (estimateTokens(out + full) <= budget) out += full
    else if (estimateTokens(out + compact) <= budget) out += compact
  }
  return { markdown: out.trimEnd(), omitted, truncated }
}
