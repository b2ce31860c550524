/* IMPORTANT
 * This snapshot file is auto-generated, but designed for humans.
 * It should be checked into source control and tracked carefully.
 * Re-generate by setting TAP_SNAPSHOT=1 and running tests.
 * Make sure to inspect the output below.  Do not ignore changes!
 */
'use strict'
exports[`test/manifest/wire-contract.test.ts > TAP > group agit > agit wire contract 1`] = `
Object {
  "access": "default",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "batch": Object {
            "items": Object {
              "properties": Object {
                "category": Object {
                  "description": "intent|reasoning|error",
                  "type": "string",
                },
                "content": Object {
                  "type": "string",
                },
                "locations": Object {
                  "items": Object {
                    "properties": Object {
                      "end_line": Object {
                        "type": "integer",
                      },
                      "file": Object {
                        "type": "string",
                      },
                      "start_line": Object {
                        "type": "integer",
                      },
                    },
                    "required": Array [
                      "file",
                    ],
                    "type": "object",
                  },
                  "type": "array",
                },
                "role": Object {
                  "description": "user|ai",
                  "type": "string",
                },
              },
              "required": Array [
                "role",
                "category",
                "content",
              ],
              "type": "object",
            },
            "type": "array",
          },
          "category": Object {
            "description": "DEPRECATED - use batch",
            "type": "string",
          },
          "content": Object {
            "description": "DEPRECATED - use batch",
            "type": "string",
          },
          "repo_path": Object {
            "description": "Rejects the batch unless it is this repository.",
            "type": "string",
          },
          "role": Object {
            "description": "DEPRECATED - use batch",
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "agit_log_step",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Log reasoning steps (AGIT)",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {},
        "type": "object",
      },
      "name": "agit_get_status",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "AGIT status",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "filepath": Object {
            "minLength": 1,
            "type": "string",
          },
          "limit": Object {
            "default": 3,
            "maximum": 50,
            "minimum": 1,
            "type": "integer",
          },
        },
        "required": Array [
          "filepath",
        ],
        "type": "object",
      },
      "name": "agit_get_file_history",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Reasoning history of a file",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "limit": Object {
            "default": 5,
            "type": "integer",
          },
          "query": Object {
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
        },
        "required": Array [
          "query",
        ],
        "type": "object",
      },
      "name": "agit_get_relevant_context",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Search past reasoning",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {},
        "type": "object",
      },
      "name": "agit_read_roadmap",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Read the project roadmap",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "count": Object {
            "default": 5,
            "maximum": 100,
            "minimum": 0,
            "type": "integer",
          },
        },
        "type": "object",
      },
      "name": "agit_get_recent_summaries",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Recent reasoning summaries",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "git_hash": Object {
            "maxLength": 64,
            "type": "string",
          },
        },
        "required": Array [
          "git_hash",
        ],
        "type": "object",
      },
      "name": "agit_get_context",
      "outputSchema": Object {
        "properties": Object {
          "text": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Reasoning behind a git commit",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group coordinate > coordinate wire contract 1`] = `
Object {
  "access": "default",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "task": Object {
            "type": "string",
          },
          "ttl_s": Object {
            "description": "Run lease; default 900.",
            "maximum": 86400,
            "minimum": 10,
            "type": "integer",
          },
        },
        "required": Array [
          "task",
        ],
        "type": "object",
      },
      "name": "task_claim",
      "outputSchema": Object {
        "properties": Object {
          "lease_expires_at": Object {
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "run_id",
          "lease_expires_at",
        ],
        "type": "object",
      },
      "title": "Claim a task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "heartbeat": Object {
            "type": "boolean",
          },
          "note": Object {
            "minLength": 1,
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "ttl_s": Object {
            "maximum": 86400,
            "minimum": 10,
            "type": "integer",
          },
        },
        "required": Array [
          "run_id",
        ],
        "type": "object",
      },
      "name": "run_update",
      "outputSchema": Object {
        "properties": Object {
          "lease_expires_at": Object {
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "run_id",
          "lease_expires_at",
        ],
        "type": "object",
      },
      "title": "Heartbeat or note a run",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "note": Object {
            "type": "string",
          },
          "outcome": Object {
            "enum": Array [
              "done",
              "blocked",
              "abandoned",
            ],
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "run_id",
          "outcome",
        ],
        "type": "object",
      },
      "name": "run_release",
      "outputSchema": Object {
        "properties": Object {
          "run_id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "run_id",
          "state",
        ],
        "type": "object",
      },
      "title": "End a run",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "paths": Object {
            "items": Object {
              "type": "string",
            },
            "maxItems": 100,
            "minItems": 1,
            "type": "array",
          },
          "repo": Object {
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "ttl_s": Object {
            "maximum": 86400,
            "minimum": 10,
            "type": "integer",
          },
        },
        "required": Array [
          "repo",
          "paths",
        ],
        "type": "object",
      },
      "name": "lease_acquire",
      "outputSchema": Object {
        "properties": Object {
          "expires_at": Object {
            "type": "string",
          },
          "id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "expires_at",
        ],
        "type": "object",
      },
      "title": "Lease paths",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "lease_id": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
        },
        "required": Array [
          "lease_id",
        ],
        "type": "object",
      },
      "name": "lease_release",
      "outputSchema": Object {
        "properties": Object {
          "ok": Object {
            "type": "boolean",
          },
        },
        "required": Array [
          "ok",
        ],
        "type": "object",
      },
      "title": "Release a lease",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group core > core wire contract 1`] = `
Object {
  "access": "always",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {},
        "type": "object",
      },
      "name": "server_info",
      "outputSchema": Object {
        "properties": Object {
          "absent": Object {
            "additionalProperties": Object {
              "type": "string",
            },
            "description": "Default groups left out here, and why (e.g. no --upstream).",
            "type": "object",
          },
          "groups": Object {
            "description": "Enabled tool groups.",
            "items": Object {
              "type": "string",
            },
            "type": "array",
          },
          "limits": Object {
            "additionalProperties": Object {
              "type": "number",
            },
            "type": "object",
          },
          "name": Object {
            "type": "string",
          },
          "revisions": Object {
            "description": "MCP revisions this server speaks.",
            "items": Object {
              "type": "string",
            },
            "type": "array",
          },
          "version": Object {
            "type": "string",
          },
        },
        "required": Array [
          "name",
          "version",
          "groups",
          "revisions",
          "limits",
        ],
        "type": "object",
      },
      "title": "Describe this ag-mcp server",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group integrate > integrate wire contract 1`] = `
Object {
  "access": "flag-only",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "expected_target_head": Object {
            "type": "string",
          },
          "proposal": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "strategy": Object {
            "enum": Array [
              "merge",
              "fast_forward",
              "squash",
            ],
            "type": "string",
          },
        },
        "required": Array [
          "proposal",
        ],
        "type": "object",
      },
      "name": "proposal_integrate",
      "outputSchema": Object {
        "properties": Object {
          "commit": Object {
            "type": "string",
          },
          "strategy": Object {
            "type": "string",
          },
        },
        "required": Array [
          "commit",
          "strategy",
        ],
        "type": "object",
      },
      "title": "Integrate a proposal",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group propose > propose wire contract 1`] = `
Object {
  "access": "default",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "description": Object {
            "type": "string",
          },
          "reasoning": Object {
            "description": "Why this change; kept with the proposal.",
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "target": Object {
            "type": "string",
          },
          "task": Object {
            "type": "string",
          },
          "title": Object {
            "maxLength": 200,
            "minLength": 1,
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
          "title",
        ],
        "type": "object",
      },
      "name": "propose",
      "outputSchema": Object {
        "properties": Object {
          "head": Object {
            "description": "The proposal's commit.",
            "type": "string",
          },
          "id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "state",
        ],
        "type": "object",
      },
      "title": "Propose a workspace's changes",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "note": Object {
            "type": "string",
          },
          "proposal": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "proposal",
          "workspace",
        ],
        "type": "object",
      },
      "name": "proposal_revise",
      "outputSchema": Object {
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "state",
        ],
        "type": "object",
      },
      "title": "Revise a proposal",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "proposal": Object {
            "type": "string",
          },
          "reason": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "proposal",
        ],
        "type": "object",
      },
      "name": "proposal_withdraw",
      "outputSchema": Object {
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "state",
        ],
        "type": "object",
      },
      "title": "Withdraw a proposal",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group read > read wire contract 1`] = `
Object {
  "access": "default",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "run_id": Object {
            "description": "A run from task_claim.",
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "whoami",
      "outputSchema": Object {
        "properties": Object {
          "principal": Object {
            "type": "string",
          },
          "roles": Object {
            "type": "object",
          },
          "scopes": Object {
            "type": "array",
          },
        },
        "required": Array [
          "principal",
          "scopes",
          "roles",
        ],
        "type": "object",
      },
      "title": "Show my identity on the server",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "repo": Object {
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "repo_list",
      "outputSchema": Object {
        "properties": Object {
          "repos": Object {
            "type": "array",
          },
        },
        "required": Array [
          "repos",
        ],
        "type": "object",
      },
      "title": "List repositories",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "cursor": Object {
            "type": "string",
          },
          "limit": Object {
            "maximum": 500,
            "minimum": 1,
            "type": "integer",
          },
          "path": Object {
            "type": "string",
          },
          "ref": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "log",
      "outputSchema": Object {
        "properties": Object {
          "commits": Object {
            "type": "array",
          },
          "next_cursor": Object {
            "type": "string",
          },
        },
        "required": Array [
          "commits",
        ],
        "type": "object",
      },
      "title": "Commit history",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "commit": Object {
            "description": "Commit id or ref.",
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
          "commit",
        ],
        "type": "object",
      },
      "name": "commit_show",
      "outputSchema": Object {
        "properties": Object {
          "files": Object {
            "type": "array",
          },
          "id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "files",
        ],
        "type": "object",
      },
      "title": "Show one commit",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "path": Object {
            "type": "string",
          },
          "ref": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "file_read",
      "outputSchema": Object {
        "properties": Object {
          "blob": Object {
            "type": "string",
          },
          "content": Object {
            "type": "string",
          },
          "kind": Object {
            "enum": Array [
              "file",
              "dir",
            ],
          },
          "path": Object {
            "type": "string",
          },
        },
        "required": Array [
          "kind",
          "path",
        ],
        "type": "object",
      },
      "title": "Read a file or directory",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "base": Object {
            "type": "string",
          },
          "head": Object {
            "type": "string",
          },
          "path": Object {
            "type": "string",
          },
          "proposal": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "diff",
      "outputSchema": Object {
        "properties": Object {
          "files": Object {
            "type": "array",
          },
          "patch": Object {
            "type": "string",
          },
        },
        "required": Array [
          "files",
          "patch",
        ],
        "type": "object",
      },
      "title": "Diff two refs or a proposal",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "limit": Object {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer",
          },
          "path": Object {
            "type": "string",
          },
          "q": Object {
            "minLength": 1,
            "type": "string",
          },
          "ref": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
          "q",
        ],
        "type": "object",
      },
      "name": "search",
      "outputSchema": Object {
        "properties": Object {
          "matches": Object {
            "type": "array",
          },
        },
        "required": Array [
          "matches",
        ],
        "type": "object",
      },
      "title": "Search file contents",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "cursor": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
          "state": Object {
            "enum": Array [
              "open",
              "claimed",
              "done",
              "blocked",
              "abandoned",
            ],
            "type": "string",
          },
          "task": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "task_list",
      "outputSchema": Object {
        "properties": Object {
          "tasks": Object {
            "type": "array",
          },
        },
        "required": Array [
          "tasks",
        ],
        "type": "object",
      },
      "title": "List tasks, or show one",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "cursor": Object {
            "type": "string",
          },
          "proposal": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
          "state": Object {
            "enum": Array [
              "open",
              "integrated",
              "withdrawn",
            ],
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "proposal_list",
      "outputSchema": Object {
        "properties": Object {
          "proposals": Object {
            "type": "array",
          },
        },
        "required": Array [
          "proposals",
        ],
        "type": "object",
      },
      "title": "List proposals, or show one",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group review > review wire contract 1`] = `
Object {
  "access": "opt-in",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "body": Object {
            "type": "string",
          },
          "comments": Object {
            "items": Object {
              "additionalProperties": false,
              "properties": Object {
                "body": Object {
                  "minLength": 1,
                  "type": "string",
                },
                "line": Object {
                  "minimum": 1,
                  "type": "integer",
                },
                "path": Object {
                  "type": "string",
                },
              },
              "required": Array [
                "path",
                "line",
                "body",
              ],
              "type": "object",
            },
            "maxItems": 500,
            "type": "array",
          },
          "proposal": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "verdict": Object {
            "enum": Array [
              "approve",
              "request_changes",
              "comment",
            ],
            "type": "string",
          },
        },
        "required": Array [
          "proposal",
          "verdict",
        ],
        "type": "object",
      },
      "name": "review_submit",
      "outputSchema": Object {
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "verdict": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "verdict",
        ],
        "type": "object",
      },
      "title": "Review a proposal",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group workspace > workspace wire contract 1`] = `
Object {
  "access": "default",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "base": Object {
            "type": "string",
          },
          "repo": Object {
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
        },
        "required": Array [
          "repo",
        ],
        "type": "object",
      },
      "name": "workspace_create",
      "outputSchema": Object {
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "state",
        ],
        "type": "object",
      },
      "title": "Create a workspace",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "diff": Object {
            "type": "boolean",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
        ],
        "type": "object",
      },
      "name": "workspace_status",
      "outputSchema": Object {
        "properties": Object {
          "changes": Object {
            "type": "array",
          },
          "id": Object {
            "type": "string",
          },
          "patch": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "changes",
        ],
        "type": "object",
      },
      "title": "Show a workspace's changes",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "content": Object {
            "type": "string",
          },
          "encoding": Object {
            "enum": Array [
              "utf8",
              "base64",
            ],
            "type": "string",
          },
          "if_match": Object {
            "type": "string",
          },
          "lease_id": Object {
            "type": "string",
          },
          "path": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
          "path",
          "content",
        ],
        "type": "object",
      },
      "name": "file_write",
      "outputSchema": Object {
        "properties": Object {
          "blob": Object {
            "type": "string",
          },
          "path": Object {
            "type": "string",
          },
        },
        "required": Array [
          "path",
          "blob",
        ],
        "type": "object",
      },
      "title": "Write a file in a workspace",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "if_match": Object {
            "type": "string",
          },
          "lease_id": Object {
            "type": "string",
          },
          "path": Object {
            "type": "string",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
          "path",
        ],
        "type": "object",
      },
      "name": "file_delete",
      "outputSchema": Object {
        "properties": Object {
          "deleted": Object {
            "type": "boolean",
          },
          "path": Object {
            "type": "string",
          },
        },
        "required": Array [
          "path",
          "deleted",
        ],
        "type": "object",
      },
      "title": "Delete a file in a workspace",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "from": Object {
            "type": "string",
          },
          "lease_id": Object {
            "type": "string",
          },
          "overwrite": Object {
            "type": "boolean",
          },
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "to": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
          "from",
          "to",
        ],
        "type": "object",
      },
      "name": "file_move",
      "outputSchema": Object {
        "properties": Object {
          "blob": Object {
            "type": "string",
          },
          "to": Object {
            "type": "string",
          },
        },
        "required": Array [
          "to",
          "blob",
        ],
        "type": "object",
      },
      "title": "Move a file in a workspace",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "repo": Object {
            "description": "The repository the id belongs to; required when the operator limits repositories (--repo).",
            "type": "string",
          },
          "run_id": Object {
            "type": "string",
          },
          "workspace": Object {
            "type": "string",
          },
        },
        "required": Array [
          "workspace",
        ],
        "type": "object",
      },
      "name": "workspace_discard",
      "outputSchema": Object {
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "state": Object {
            "type": "string",
          },
        },
        "required": Array [
          "id",
          "state",
        ],
        "type": "object",
      },
      "title": "Discard a workspace",
    },
  ],
}
`
