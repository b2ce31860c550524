#!/usr/bin/env node
// ag-server: the AGWP v1 reference server and its operator CLI.
import { main } from '../server/src/cli.ts'

await main(process.argv.slice(2))
