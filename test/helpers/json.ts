// A parsed JSON body in a test, read by path (`r.body.proposal.id`). Tests assert on the values
// they read, so a wrong path fails where it is read; typing every AGWP answer here would restate
// contract/agwp-v1.schema.json. Shipped code never uses it (the lint forbids `any` elsewhere).
// biome-ignore lint/suspicious/noExplicitAny: see above, the one place tests may hold untyped JSON
export type Json = any
