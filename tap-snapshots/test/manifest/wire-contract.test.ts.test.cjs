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
          "locations": Object {
            "description": "DEPRECATED - use batch (the single entry's locations)",
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

exports[`test/manifest/wire-contract.test.ts > TAP > group bundles > bundles wire contract 1`] = `
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
        "properties": Object {
          "includeEvidence": Object {
            "description": "Include the referenced evidence (default true).",
            "type": "boolean",
          },
          "outputPath": Object {
            "description": "The new bundle file, relative to the pack root.",
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
          "sources": Object {
            "description": "Repo-relative paths whose Source Cache records to include (at most 100).",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "taskId": Object {
            "description": "The task to export (default the current one).",
            "maxLength": 300,
            "type": "string",
          },
        },
        "required": Array [
          "outputPath",
        ],
        "type": "object",
      },
      "name": "bundle_export",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "bundleId": Object {
            "type": "string",
          },
          "bytes": Object {
            "type": "integer",
          },
          "evidence": Object {
            "type": "integer",
          },
          "outputPath": Object {
            "type": "string",
          },
          "sources": Object {
            "type": "integer",
          },
          "taskId": Object {
            "type": "string",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "bundleId",
          "outputPath",
          "taskId",
          "sources",
          "evidence",
          "bytes",
        ],
        "type": "object",
      },
      "title": "Export a task bundle",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "json": Object {
            "description": "Return only the structured result.",
            "type": "boolean",
          },
          "path": Object {
            "description": "The bundle file, relative to the pack root.",
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
        },
        "required": Array [
          "path",
        ],
        "type": "object",
      },
      "name": "bundle_inspect",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "bundle": Object {
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "bundle",
        ],
        "type": "object",
      },
      "title": "Inspect a task bundle",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "asNew": Object {
            "description": "Preview importing under a new task id.",
            "type": "boolean",
          },
          "json": Object {
            "description": "Return only the structured plan.",
            "type": "boolean",
          },
          "path": Object {
            "description": "The bundle file, relative to the pack root.",
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
        },
        "required": Array [
          "path",
        ],
        "type": "object",
      },
      "name": "bundle_import_plan",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "plan": Object {
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "plan",
        ],
        "type": "object",
      },
      "title": "Plan a bundle import",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "asNew": Object {
            "description": "Import under a deterministic new task id if the id exists.",
            "type": "boolean",
          },
          "json": Object {
            "description": "Return only the structured result.",
            "type": "boolean",
          },
          "path": Object {
            "description": "The bundle file, relative to the pack root.",
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
          "write": Object {
            "description": "Apply the import (default: plan only).",
            "type": "boolean",
          },
        },
        "required": Array [
          "path",
        ],
        "type": "object",
      },
      "name": "bundle_import",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "applied": Object {
            "type": "boolean",
          },
          "result": Object {
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "applied",
          "result",
        ],
        "type": "object",
      },
      "title": "Import a task bundle",
    },
  ],
}
`

exports[`test/manifest/wire-contract.test.ts > TAP > group continuity > continuity wire contract 1`] = `
Object {
  "access": "opt-in",
  "tools": Array [
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "budget": Object {
            "description": "Approximate token budget (≈ characters ÷ 4); wins over preset. Default: the pack's defaultBudget (4000).",
            "type": "number",
          },
          "preset": Object {
            "description": "Named token budget: quick (1200), chat (4000), agent (8000) or deep (16000). Use quick at task start.",
            "enum": Array [
              "quick",
              "chat",
              "agent",
              "deep",
            ],
            "type": "string",
          },
          "query": Object {
            "description": "Focused free-text query for the current task: matching Source Cache records keep full summaries, unrelated ones shrink to stubs.",
            "maxLength": 500,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "load_context",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "budget": Object {
            "type": "integer",
          },
          "estimatedTokens": Object {
            "type": "integer",
          },
          "gateWarnings": Object {
            "description": "Lifecycle warnings of the task gate.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "omittedSections": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "truncatedSections": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
        },
        "required": Array [
          "text",
          "estimatedTokens",
          "budget",
          "omittedSections",
          "truncatedSections",
          "gateWarnings",
        ],
        "type": "object",
      },
      "title": "Load the task resume",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "budget": Object {
            "description": "Approximate token budget (≈ characters ÷ 4); wins over preset. Default: the pack's defaultBudget (4000).",
            "type": "number",
          },
          "preset": Object {
            "description": "Named token budget: quick (1200), chat (4000), agent (8000) or deep (16000). Use quick at task start.",
            "enum": Array [
              "quick",
              "chat",
              "agent",
              "deep",
            ],
            "type": "string",
          },
          "query": Object {
            "description": "Focused free-text query for the current task: matching Source Cache records keep full summaries, unrelated ones shrink to stubs.",
            "maxLength": 500,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "resume",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "budget": Object {
            "type": "integer",
          },
          "estimatedTokens": Object {
            "type": "integer",
          },
          "gateWarnings": Object {
            "description": "Lifecycle warnings of the task gate.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "omittedSections": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "truncatedSections": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
        },
        "required": Array [
          "text",
          "estimatedTokens",
          "budget",
          "omittedSections",
          "truncatedSections",
          "gateWarnings",
        ],
        "type": "object",
      },
      "title": "Re-read the task resume",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "evidence": Object {
            "description": "Evidence ids (from attach_evidence) supporting it.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "files": Object {
            "description": "Repo-relative paths the decision applies to.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "text": Object {
            "description": "The decision and its rationale, in one or two sentences.",
            "maxLength": 4000,
            "minLength": 1,
            "pattern": "\\\\S",
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "name": "record_decision",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "ts": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "id",
          "ts",
        ],
        "type": "object",
      },
      "title": "Record a decision",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "files": Object {
            "description": "Repo-relative paths involved.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "reason": Object {
            "description": "Why it failed or must not be retried.",
            "maxLength": 4000,
            "type": "string",
          },
          "text": Object {
            "description": "The approach that was tried and abandoned.",
            "maxLength": 4000,
            "minLength": 1,
            "pattern": "\\\\S",
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "name": "record_dead_end",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "ts": Object {
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "id",
          "ts",
        ],
        "type": "object",
      },
      "title": "Record a dead end",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "command": Object {
            "description": "The command that produced it.",
            "maxLength": 2000,
            "type": "string",
          },
          "content": Object {
            "description": "Inline evidence body (ignored when path is set).",
            "maxLength": 262144,
            "type": "string",
          },
          "exitCode": Object {
            "description": "That command's exit code.",
            "type": "number",
          },
          "kind": Object {
            "description": "A label such as test, command, note, link or json (json must parse; stored as .json). Default note.",
            "maxLength": 40,
            "type": "string",
          },
          "path": Object {
            "description": "Repo-relative path of a file whose content is the evidence.",
            "maxLength": 1000,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "attach_evidence",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "id": Object {
            "description": "The evidence id (an event id).",
            "type": "string",
          },
          "path": Object {
            "description": "Where the body is stored, under .agentpack/.",
            "type": "string",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "id",
          "path",
        ],
        "type": "object",
      },
      "title": "Attach verification evidence",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "path": Object {
            "description": "Repo-relative path of the inspected file (a regular file inside the root).",
            "maxLength": 1000,
            "minLength": 1,
            "type": "string",
          },
          "snippet": Object {
            "description": "A short excerpt worth keeping with it.",
            "maxLength": 2000,
            "type": "string",
          },
          "summary": Object {
            "description": "The durable conclusion about the file.",
            "maxLength": 4000,
            "type": "string",
          },
        },
        "required": Array [
          "path",
        ],
        "type": "object",
      },
      "name": "record_source",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "source": Object {
            "description": "The stored record: path, hash, size, mtimeMs, recordedAt, summary, snippet.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "source",
        ],
        "type": "object",
      },
      "title": "Record a source conclusion",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "changed": Object {
            "description": "Only sources whose content changed.",
            "type": "boolean",
          },
          "json": Object {
            "description": "Return only the structured list (no text rendering).",
            "type": "boolean",
          },
          "missing": Object {
            "description": "Only sources whose file is gone.",
            "type": "boolean",
          },
        },
        "type": "object",
      },
      "name": "source_status",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "sources": Object {
            "items": Object {
              "type": "object",
            },
            "type": "array",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "total": Object {
            "type": "integer",
          },
        },
        "required": Array [
          "text",
          "sources",
          "total",
        ],
        "type": "object",
      },
      "title": "Check source conclusions",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "json": Object {
            "description": "Return only the structured report.",
            "type": "boolean",
          },
        },
        "type": "object",
      },
      "name": "task_audit",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "issues": Object {
            "items": Object {
              "type": "object",
            },
            "type": "array",
          },
          "passport": Object {
            "description": "The Task Passport, or null when there is none.",
            "type": Array [
              "object",
              "null",
            ],
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "issues",
          "passport",
        ],
        "type": "object",
      },
      "title": "Audit the current task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {},
        "type": "object",
      },
      "name": "release_preflight",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "ok": Object {
            "description": "No check failed.",
            "type": "boolean",
          },
          "text": Object {
            "description": "The report as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "ok",
        ],
        "type": "object",
      },
      "title": "Release preflight",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {},
        "type": "object",
      },
      "name": "task_handoff",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "passport": Object {
            "description": "The Task Passport, or null when there is none.",
            "type": Array [
              "object",
              "null",
            ],
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
        ],
        "type": "object",
      },
      "title": "Hand the task over",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "agwpProposal": Object {
            "description": "An AGWP proposal id this passport produced.",
            "maxLength": 200,
            "type": "string",
          },
          "agwpRun": Object {
            "description": "The AGWP run id (from task_claim) this passport works within.",
            "maxLength": 200,
            "type": "string",
          },
          "agwpTask": Object {
            "description": "An AGWP task id this passport works on (ties the passport to the remote workflow).",
            "maxLength": 200,
            "type": "string",
          },
          "constraints": Object {
            "description": "Rules the work must respect.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "nextActions": Object {
            "description": "Initial concrete next steps.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "objective": Object {
            "description": "What done looks like.",
            "maxLength": 4000,
            "type": "string",
          },
          "risk": Object {
            "description": "Risk level.",
            "enum": Array [
              "unknown",
              "low",
              "medium",
              "high",
            ],
            "type": "string",
          },
          "tags": Object {
            "description": "Free-form labels.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "title": Object {
            "description": "Short imperative task title.",
            "maxLength": 200,
            "minLength": 1,
            "pattern": "\\\\S",
            "type": "string",
          },
          "writeScope": Object {
            "description": "Repo-relative prefix paths this task may modify (a directory covers its children; no globs).",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
        },
        "required": Array [
          "title",
        ],
        "type": "object",
      },
      "name": "task_start",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
        ],
        "type": "object",
      },
      "title": "Start a task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "full": Object {
            "description": "Show every field of the passport, not only the summary.",
            "type": "boolean",
          },
          "id": Object {
            "description": "A task id (listed by task_list, or passport_list when the read group is enabled); default the current task.",
            "maxLength": 300,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "task_status",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "drift": Object {
            "type": Array [
              "string",
              "null",
            ],
          },
          "gateWarnings": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "passport": Object {
            "description": "The Task Passport, or null when there is none.",
            "type": Array [
              "object",
              "null",
            ],
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
          "drift",
          "gateWarnings",
        ],
        "type": "object",
      },
      "title": "Show a task's status",
    },
    Object {
      "altName": "task_list",
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "all": Object {
            "description": "Every task: no filter, no limit.",
            "type": "boolean",
          },
          "compact": Object {
            "description": "One short line per task.",
            "type": "boolean",
          },
          "json": Object {
            "description": "Return only the structured list.",
            "type": "boolean",
          },
          "limit": Object {
            "description": "At most this many (default 50).",
            "type": "number",
          },
          "open": Object {
            "description": "Only open tasks.",
            "type": "boolean",
          },
          "scope": Object {
            "description": "Only tasks whose write scope overlaps one of these paths.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "status": Object {
            "description": "Only these statuses.",
            "items": Object {
              "enum": Array [
                "active",
                "parked",
                "blocked",
                "verifying",
                "completed",
                "abandoned",
              ],
              "type": "string",
            },
            "maxItems": 6,
            "type": "array",
          },
        },
        "type": "object",
      },
      "name": "passport_list",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "jsonWarnings": Object {
            "description": "With json: the warnings Agentpack puts in the result's _meta (io.agentpack/taskListWarnings) instead of the text.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "tasks": Object {
            "items": Object {
              "type": "object",
            },
            "type": "array",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
          "total": Object {
            "type": "integer",
          },
          "warnings": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
        },
        "required": Array [
          "text",
          "tasks",
          "total",
          "warnings",
        ],
        "type": "object",
      },
      "title": "List task passports",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "id": Object {
            "description": "The task id to switch to (listed by task_list, or passport_list when the read group is enabled).",
            "maxLength": 300,
            "minLength": 1,
            "type": "string",
          },
          "parkCurrent": Object {
            "description": "Park the current open task first.",
            "type": "boolean",
          },
        },
        "required": Array [
          "id",
        ],
        "type": "object",
      },
      "name": "task_switch",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
        ],
        "type": "object",
      },
      "title": "Switch to another task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {},
        "type": "object",
      },
      "name": "task_park",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
        ],
        "type": "object",
      },
      "title": "Park the current task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "agwpProposal": Object {
            "description": "An AGWP proposal id this passport produced.",
            "maxLength": 200,
            "type": "string",
          },
          "agwpRun": Object {
            "description": "The AGWP run id (from task_claim) this passport works within.",
            "maxLength": 200,
            "type": "string",
          },
          "agwpTask": Object {
            "description": "An AGWP task id this passport works on (ties the passport to the remote workflow).",
            "maxLength": 200,
            "type": "string",
          },
          "clearNextActions": Object {
            "description": "Replace the next actions with nextActions (or clear them).",
            "type": "boolean",
          },
          "constraints": Object {
            "description": "Constraints to append.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "nextActions": Object {
            "description": "Next steps to append, or the whole list with clearNextActions.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "objective": Object {
            "description": "Replacement objective.",
            "maxLength": 4000,
            "type": "string",
          },
          "replaceConstraints": Object {
            "description": "Replace the constraints with the given list instead of appending.",
            "type": "boolean",
          },
          "risk": Object {
            "description": "Risk level.",
            "enum": Array [
              "unknown",
              "low",
              "medium",
              "high",
            ],
            "type": "string",
          },
          "tags": Object {
            "description": "Labels to append.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "writeScope": Object {
            "description": "Repo-relative prefix paths to add to the write scope.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
        },
        "type": "object",
      },
      "name": "task_update",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
        ],
        "type": "object",
      },
      "title": "Update the current task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "evidence": Object {
            "description": "Evidence ids backing it.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "status": Object {
            "description": "The verification status (default pending).",
            "enum": Array [
              "unknown",
              "pending",
              "passed",
              "failed",
              "accepted",
            ],
            "type": "string",
          },
          "summary": Object {
            "description": "What was verified, and how.",
            "maxLength": 4000,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "task_update_verification",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "changed": Object {
            "type": "boolean",
          },
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "changed",
          "passport",
        ],
        "type": "object",
      },
      "title": "Record verification",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "evidence": Object {
            "description": "Evidence ids backing the verdict.",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "force": Object {
            "description": "Allow accepted finalization with next actions left.",
            "type": "boolean",
          },
          "status": Object {
            "description": "Final verification status to set while closing.",
            "enum": Array [
              "passed",
              "failed",
              "accepted",
            ],
            "type": "string",
          },
          "summary": Object {
            "description": "Closing summary; mention commit hashes.",
            "maxLength": 4000,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "task_finalize",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "advisories": Object {
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "passport": Object {
            "description": "The Task Passport as stored in .agentpack/tasks/<id>/passport.json.",
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "passport",
          "advisories",
        ],
        "type": "object",
      },
      "title": "Finalize the current task",
    },
    Object {
      "annotations": Object {
        "destructiveHint": true,
        "idempotentHint": false,
        "openWorldHint": false,
        "readOnlyHint": false,
      },
      "inputSchema": Object {
        "properties": Object {
          "attachments": Object {
            "description": "Filled in by ag-mcp, not by you: records other enabled groups attach (the staged AGIT thoughts when the agit group is enabled), stored in checkpoint.json.",
            "maxProperties": 20,
            "type": "object",
          },
          "nextActions": Object {
            "description": "Next steps (replace the previous list when given).",
            "items": Object {
              "maxLength": 2000,
              "type": "string",
            },
            "maxItems": 200,
            "type": "array",
          },
          "status": Object {
            "description": "The overall status line (replaces the previous one).",
            "maxLength": 1000,
            "type": "string",
          },
          "summary": Object {
            "description": "What was done and decided since the last checkpoint.",
            "maxLength": 4000,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "checkpoint",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "id": Object {
            "type": "string",
          },
          "manifest": Object {
            "type": "object",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "id",
          "manifest",
        ],
        "type": "object",
      },
      "title": "Save a checkpoint",
    },
    Object {
      "altName": "diff",
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "from": Object {
            "description": "Checkpoint id to compare from.",
            "maxLength": 100,
            "type": "string",
          },
          "to": Object {
            "description": "Checkpoint id to compare to.",
            "maxLength": 100,
            "type": "string",
          },
        },
        "type": "object",
      },
      "name": "checkpoint_diff",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
        ],
        "type": "object",
      },
      "title": "Compare checkpoints",
    },
    Object {
      "annotations": Object {
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
        "readOnlyHint": true,
      },
      "inputSchema": Object {
        "properties": Object {
          "limit": Object {
            "description": "How many recent events (default 30).",
            "type": "number",
          },
        },
        "type": "object",
      },
      "name": "replay",
      "outputSchema": Object {
        "additionalProperties": false,
        "properties": Object {
          "count": Object {
            "type": "integer",
          },
          "text": Object {
            "description": "The result as Agentpack prints it.",
            "type": "string",
          },
        },
        "required": Array [
          "text",
          "count",
        ],
        "type": "object",
      },
      "title": "Replay the ledger",
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
          "repos": Object {
            "type": "array",
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
