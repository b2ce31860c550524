#!/usr/bin/env node
// ag-server: the AGWP v1 reference server and its operator CLI.
import { hideBin } from 'yargs/helpers'
import { main } from '../server/src/cli.ts'

await main(hideBin(process.argv))
