// The standalone executable's entry (packaging/build-exe.mjs bundles it as CommonJS: Node's
// single executable applications run one CommonJS script, which has no top-level await).
// In an executable, argv[0] and argv[1] are both the executable itself.
import { runAgMcp } from './run-ag-mcp.ts'

void runAgMcp(process.argv.slice(2), process.env).then((code) => process.exit(code))
