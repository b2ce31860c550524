// The scripted agent from the command line:
//   node dist/scripted-agent.mjs --upstream URL --token-file F [--repo demo] [--revision 2025-06-18]
//   node dist/scripted-agent.mjs --local [REPO]      (ag-mcp's local mode on your repository)
import { runSession } from './session.ts'

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`)
  return i === -1 ? undefined : argv[i + 1]
}

{
  const argv = process.argv.slice(2)
  const upstream = flag(argv, 'upstream')
  const tokenFile = flag(argv, 'token-file')
  const repo = flag(argv, 'repo')
  const revision = flag(argv, 'revision')
  const mcp = flag(argv, 'ag-mcp') ?? new URL('./ag-mcp.mjs', import.meta.url).pathname
  const local = argv.indexOf('--local')
  const localRepo =
    local === -1 ? undefined : ((argv[local + 1]?.startsWith('--') ? undefined : argv[local + 1]) ?? '.')
  if (localRepo === undefined && (!upstream || !tokenFile)) {
    process.stderr.write(
      'usage: scripted-agent (--local [REPO] | --upstream URL --token-file FILE [--repo NAME]) [--revision REV] [--ag-mcp PATH]\n',
    )
    process.exit(2)
  }
  const r = await runSession({
    command:
      localRepo !== undefined
        ? [process.execPath, mcp, '--local', localRepo, '--log-level', 'warn']
        : [process.execPath, mcp, '--upstream', upstream as string, '--token-file', tokenFile as string],
    ...(repo ? { repo } : localRepo !== undefined ? {} : { repo: 'demo' }),
    ...(revision ? { revision } : {}),
  })
  // The session's last line said which (done, or failed and why).
  process.exit(r.ok ? 0 : 1)
}
