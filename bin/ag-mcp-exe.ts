// The standalone executable's entry (packaging/build-exe.mjs bundles it as CommonJS: Node's
// single executable applications run one CommonJS script, which has no top-level await).
// In an executable, argv[0] and argv[1] are both the executable itself.
//
// It embeds ag-server too: `<executable> ag-server …` runs it (the same CLI as the package's
// ag-server), which is how local mode starts its private server without a Node install.
import { EMBEDDED_AG_SERVER } from '../operator/local.ts'
import { runAgMcp } from './run-ag-mcp.ts'

const argv = process.argv.slice(2)
if (argv[0] === EMBEDDED_AG_SERVER) void import('../server/src/cli.ts').then(({ main }) => main(argv.slice(1)))
else void runAgMcp(argv, process.env).then((code) => process.exit(code))
