// The agwp plugin's options. Their names predate the plugin contract and are kept as they were
// (no prefix): operators' configurations name them.
import type { OptionTable } from '../../core/src/plugin-api.ts'

export const options = {
  upstream: {
    type: 'string',
    role: 'upstream-url',
    value: 'URL',
    description:
      'Base URL of the ag-server (AGWP v1 lives under /agwp/v1). http:// only for loopback hosts unless --allow-insecure-http.',
  },
  'token-file': {
    type: 'string',
    role: 'credential-file',
    value: 'PATH',
    description: 'File holding the AGWP token; re-read after a 401, so a rotated token needs no restart.',
  },
  'token-env': {
    type: 'string',
    role: 'credential-env',
    value: 'NAME',
    description: 'Environment variable holding the AGWP token.',
  },
  'timeout-ms': {
    type: 'number',
    default: 30000,
    value: 'MS',
    schema: { type: 'integer', minimum: 1 },
    description: 'Overall deadline of one upstream call.',
  },
  'connect-timeout-ms': {
    type: 'number',
    default: 5000,
    value: 'MS',
    schema: { type: 'integer', minimum: 1 },
    description: 'Deadline for connecting to the upstream.',
  },
  'max-response-bytes': {
    type: 'number',
    default: 16777216,
    value: 'BYTES',
    schema: { type: 'integer', minimum: 1024 },
    description: 'Largest upstream response body read.',
  },
} as const satisfies OptionTable
