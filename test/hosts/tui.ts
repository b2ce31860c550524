// A host's interactive UI, driven as a person would: in a tmux session of its own (private
// socket, no tmux config), typing a command and reading the screen. For what a host shows only
// there (Gemini CLI's /mcp list of a server's tools). Waits for what the screen says, polling it
// a bounded number of times; never a fixed sleep.
import { spawnSync } from 'node:child_process'

export interface Screen {
  ok: boolean
  /** The screen's text (scrollback included) when it showed what was waited for, else why not. */
  text: string
}

const POLL_MS = 250
const POLLS = 240 // 60 s at most per wait

export function haveTmux(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0
}

/**
 * Starts `argv` in tmux, waits for `ready`, types `keys` until the screen shows they are
 * `understood`, presses Enter and waits for `done`; when the answer says `notYet` instead (the
 * host still starting its servers), asks again, a few times at most. Then ends the session.
 */
export async function typeAndRead(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  keys: string,
  done: (screen: string) => boolean,
  o: {
    /** Shown while the typed keys are understood (a command's suggestion): else they are typed again. */
    understood: RegExp
    /** The answer when the host is not ready yet: it is asked again. */
    notYet?: RegExp
  },
): Promise<Screen> {
  const socket = `ag-mcp-hosts-${process.pid}`
  const tmux = (...args: string[]) =>
    spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { cwd, env, encoding: 'utf8', timeout: 10_000 })
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-500', '-t', 'host').stdout ?? ''
  const waitFor = async (shown: (s: string) => boolean, polls = POLLS): Promise<string | undefined> => {
    for (let i = 0; i < polls; i++) {
      const s = screen()
      if (shown(s)) return s
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
    return undefined
  }
  const times = (s: string, re: RegExp) => s.match(new RegExp(re.source, 'g'))?.length ?? 0
  const started = tmux('new-session', '-d', '-s', 'host', '-x', '200', '-y', '60', '-c', cwd, ...argv)
  if (started.status !== 0) return { ok: false, text: `tmux new-session: ${started.stderr.trim()}` }
  // The pane's process leads a process group of its own; the host and the servers it started are
  // in it. Ending tmux alone leaves them running (a UI may outlive its terminal's hang-up).
  const pane = Number(tmux('display-message', '-p', '-t', 'host', '#{pane_pid}').stdout.trim())
  try {
    if ((await waitFor((s) => ready.test(s))) === undefined)
      return { ok: false, text: `never ready; the screen:\n${screen()}` }
    for (let ask = 0; ask < 10; ask++) {
      // A UI can show its prompt before it takes keys, or before it knows its commands (Enter
      // would then send them to the model as a prompt): type until it shows them understood.
      let typed = false
      for (let attempt = 0; attempt < 20 && !typed; attempt++) {
        tmux('send-keys', '-t', 'host', 'C-u')
        tmux('send-keys', '-t', 'host', '-l', keys)
        typed = (await waitFor((s) => o.understood.test(s), 8)) !== undefined
      }
      if (!typed) return { ok: false, text: `${keys} never showed as understood; the screen:\n${screen()}` }
      const notYet = o.notYet
      const before = notYet ? times(screen(), notYet) : 0
      tmux('send-keys', '-t', 'host', 'Enter')
      const s = await waitFor((x) => done(x) || (notYet !== undefined && times(x, notYet) > before))
      if (s === undefined) return { ok: false, text: `no answer to ${keys}; the screen:\n${screen()}` }
      if (done(s)) return { ok: true, text: s }
      await waitFor(() => false, 8) // the host is still starting: ask again in a moment
    }
    return { ok: false, text: `still not ready after 10 tries; the screen:\n${screen()}` }
  } finally {
    if (pane > 0) await endGroup(pane)
    tmux('kill-server')
  }
}

/** SIGTERM to a process group, SIGKILL if it is still there after 40 polls. */
async function endGroup(leader: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-leader, 0)
      return true
    } catch {
      return false
    }
  }
  if (!alive()) return
  process.kill(-leader, 'SIGTERM')
  for (let i = 0; i < 40 && alive(); i++) await new Promise((r) => setTimeout(r, POLL_MS))
  if (alive()) process.kill(-leader, 'SIGKILL')
}
