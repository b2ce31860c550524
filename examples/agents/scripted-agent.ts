// The scripted agent from the command line:
//   node dist/scripted-agent.mjs --upstream URL --token-file F [--repo demo] [--revision 2025-06-18]
import { runSession } from './session.ts'

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`)
  return i === -1 ? undefined : argv[i + 1]
}

{
  const argv = process.argv.slice(2)
  const upstream = flag(argv, 'upstream')
  const tokenFile = flag(argv, 'token-file')
  const repo = flag(argv, 'repo') ?? 'demo'
  const revision = flag(argv, 'revision')
  const mcp = flag(argv, 'ag-mcp') ?? new URL('./ag-mcp.mjs', import.meta.url).pathname
  if (!upstream || !tokenFile) {
    process.stderr.write(
      'usage: scripted-agent --upstream URL --token-file FILE [--repo NAME] [--revision REV] [--ag-mcp PATH]\n',
    )
    process.exit(2)
  }
  const r = await runSession({
    command: [process.execPath, mcp, '--upstream', upstream, '--token-file', tokenFile],
    repo,
    ...(revision ? { revision } : {}),
  })
  process.exit(r.failures === 0 && r.proposal ? 0 : 1)
}
