// The ag-mcp binary (ESM, dist/ag-mcp.mjs).
import { runAgMcp } from './run-ag-mcp.ts'

const code = await runAgMcp(process.argv.slice(2), process.env)
// The writer resolved idle() only once the OS took every byte of every answer: nothing is lost by
// exiting now, and nothing (an idle keep-alive socket, a timer) can keep a finished session alive.
process.exit(code)
