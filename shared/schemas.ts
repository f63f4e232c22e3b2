import { z } from 'zod';
import { ENGINES } from './engines.js';
import { MAX_PARAMS, MAX_SQL_LENGTH } from './limits.js';
import { CONNECTION_NAME_PATTERN } from './names.js';

/**
 * The daemon API's bodies. Daemon, shim and CLI all parse with these, so a field cannot
 * drift between the three programs.
 */

export const ConnectionNameSchema = z.string().regex(CONNECTION_NAME_PATTERN, 'use 1-64 letters, digits, - or _');

/**
 * A reference to a connection in a call: a registry name, or `project:<name>` for one the
 * daemon found in the caller's project folder (resolved against the call's `project`).
 */
export const ConnectionRefSchema = z
  .string()
  .regex(/^(project:)?[A-Za-z0-9_-]{1,64}$/, 'use a name from list_connections (1-64 letters, digits, - or _, or project:<name>)');

export const EngineSchema = z.enum(ENGINES);

export const KeySourceSchema = z.enum(['keychain', 'env', 'file']);
export type KeySource = z.infer<typeof KeySourceSchema>;

export const HealthSchema = z.object({
  name: z.literal('hanactl'),
  version: z.string(),
  pid: z.number().int(),
  uptimeMs: z.number(),
  keySource: KeySourceSchema,
  socket: z.string(),
  home: z.string(),
  node: z.string(),
  /** The MCP over HTTP base URL (`http://127.0.0.1:PORT`; endpoints at `/mcp/<connection>`), when it is on. */
  mcpHttp: z.string().optional(),
});
export type Health = z.infer<typeof HealthSchema>;

/**
 * The byte cap of one tool result, text and structured content together: 64 KiB is about
 * 16k tokens, a tenth of a large context window. A person raises it per connection
 * (`hanactl set <name> --max-result-bytes N`) up to 4 MiB, well under the 10 MiB a stdio MCP
 * client buffers for one message.
 */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;
export const MIN_MAX_RESULT_BYTES = 4 * 1024;
export const MAX_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * What the daemon cut from a result to keep it under its byte cap, and the sentence that says
 * so and how to ask for less. Cut cells end in `…[cut]` in the text and the structured rows alike.
 */
export const ResultCutSchema = z.object({
  limitBytes: z.number().int(),
  /** Rows (or list entries) read but left out for size. */
  rowsLeftOut: z.number().int(),
  /** Cells (or strings) shortened to `cellChars` characters. */
  cellsCut: z.number().int(),
  cellChars: z.number().int(),
  /** The columns (or fields) whose values were shortened. */
  columns: z.array(z.string()),
  note: z.string(),
});
export type ResultCut = z.infer<typeof ResultCutSchema>;

/** The largest cost limit `hanactl set --max-cost` takes (plan costs are in each engine's own units). */
export const MAX_MAX_COST = 1e15;

/**
 * A value an agent may bind to a `?`/`$1` placeholder. A number must be finite: `1e400` is valid
 * JSON that parses to Infinity, which no engine can bind (a client that re-serialises it sends null).
 */
export const ParamSchema = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: 'a parameter is a string, a finite number, true, false or null (1e400 is not finite)',
});
export type Param = z.infer<typeof ParamSchema>;

export const AddConnectionRequestSchema = z.strictObject({
  name: ConnectionNameSchema,
  url: z.string().min(1).max(4096),
  password: z.string().max(4096).optional(),
  description: z.string().max(500).optional(),
  allowWrite: z.boolean().optional(),
  context: z.array(z.string().max(64)).max(32).optional(),
  replace: z.boolean().optional(),
  /** Open a connection first and save only if it answers (`hanactl add` does, unless --no-test). */
  test: z.boolean().optional(),
});
export type AddConnectionRequest = z.infer<typeof AddConnectionRequestSchema>;

/** How long a write waits for a person's decision unless `hanactl set --approval-timeout` says otherwise. */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300;
export const MIN_APPROVAL_TIMEOUT_SECONDS = 1;
export const MAX_APPROVAL_TIMEOUT_SECONDS = 86_400;

/** How a write that awaited a person ended, and who decided (`cli` with the OS user, `elicitation` with the client). */
export const ApprovalDecisionSchema = z.object({
  decision: z.enum(['approved', 'denied', 'expired', 'cancelled', 'stopped']),
  by: z.enum(['cli', 'elicitation']).nullable(),
  who: z.string().nullable(),
  reason: z.string().nullable(),
  waitedMs: z.number(),
  /** In the audit record: the parameter values the person decided on, as shown to them (quoted, escaped, long ones cut). */
  params: z.array(z.string()).optional(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** `POST /v1/queries/:id/approve|deny`: the OS user deciding, and (deny) why. */
export const ApprovalRequestSchema = z.strictObject({
  user: z.string().max(100).optional(),
  reason: z.string().max(1000).optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/** What `hanactl approve|deny` answers: the write's id, connection and statement, and the decision. */
export const ApprovalResultSchema = z.object({
  id: z.string(),
  connection: z.string(),
  sql: z.string(),
  /** The bound parameter values, as `hanactl queries` shows them. */
  params: z.array(z.string()).optional(),
  decision: ApprovalDecisionSchema,
});
export type ApprovalResult = z.infer<typeof ApprovalResultSchema>;

/** What a person may change on a registered connection (`hanactl set`). */
export const UpdateConnectionRequestSchema = z.strictObject({
  allowWrite: z.boolean().optional(),
  context: z.array(z.string().max(64)).max(32).optional(),
  description: z.string().max(500).optional(),
  /** The byte cap of one tool result on this connection; null goes back to the default. */
  maxResultBytes: z.number().int().min(MIN_MAX_RESULT_BYTES).max(MAX_MAX_RESULT_BYTES).nullable().optional(),
  /** Sign context values for the verifying function a person installs (PostgreSQL). */
  signedContext: z.boolean().optional(),
  /** Sessions get only the connection's curated tools; run_query is not offered. */
  curatedOnly: z.boolean().optional(),
  /** Reads whose plan estimate is above this are refused before they run; null clears it. */
  maxCost: z.number().positive().max(MAX_MAX_COST).nullable().optional(),
  /** Each write waits for a person's approval (`hanactl approve`); only on a connection open for writes. */
  approveWrites: z.boolean().optional(),
  /** How long a write waits for a decision before it expires unrun; null goes back to the default. */
  approvalTimeoutSeconds: z.number().int().min(MIN_APPROVAL_TIMEOUT_SECONDS).max(MAX_APPROVAL_TIMEOUT_SECONDS).nullable().optional(),
  /**
   * For signed-in callers, the token claim a context name's value comes from; null removes the
   * mapping of that name, the others stay.
   */
  contextClaims: z.record(z.string().max(64), z.string().min(1).max(128).nullable()).optional(),
});
export type UpdateConnectionRequest = z.infer<typeof UpdateConnectionRequestSchema>;

export const ConnectionInfoSchema = z.object({
  name: z.string(),
  engine: EngineSchema,
  /** The URL without any password. */
  url: z.string(),
  description: z.string().optional(),
  hasPassword: z.boolean(),
  allowWrite: z.boolean(),
  context: z.array(z.string()),
  createdAt: z.string(),
  /** A byte cap a person set for this connection's tool results (else DEFAULT_MAX_RESULT_BYTES). */
  maxResultBytes: z.number().int().optional(),
  /** Context values are signed (`hanactl set --signed-context`). */
  signedContext: z.boolean().optional(),
  /** Its sessions get only its curated tools (`hanactl set --curated-only`). */
  curatedOnly: z.boolean().optional(),
  /** The plan cost above which its reads are refused (`hanactl set --max-cost`). */
  maxCost: z.number().optional(),
  /** Each write waits for a person's approval (`hanactl set --approve-writes`). */
  approveWrites: z.boolean().optional(),
  /** An approval timeout a person set (else DEFAULT_APPROVAL_TIMEOUT_SECONDS). */
  approvalTimeoutSeconds: z.number().int().optional(),
  /** For signed-in callers, the token claim each context name's value comes from (`hanactl set --context-claim`). */
  contextClaims: z.record(z.string(), z.string()).optional(),
  /** Project connections only: the file (or variable) it was found in. */
  source: z.string().optional(),
  /** `POST /v1/connections` with a test only: warnings for the person, as `ConnectionTestResult.advice`. */
  advice: z.array(z.string()).optional(),
});
export type ConnectionInfo = z.infer<typeof ConnectionInfoSchema>;

/** `POST /v1/connections/:name/context-sql`: the role to grant the function to (default: the URL's user), the schema (default `hanactl`). */
export const ContextSqlRequestSchema = z.strictObject({
  role: z.string().max(63).optional(),
  schema: z.string().max(63).optional(),
});
export type ContextSqlRequest = z.infer<typeof ContextSqlRequestSchema>;

/** `POST /v1/connections/:name/context-sql`: the SQL installing the function that verifies signed context values. */
export const ContextSqlResultSchema = z.object({ sql: z.string() });
export type ContextSqlResult = z.infer<typeof ContextSqlResultSchema>;

/** How the project of a listing was read: `ok`, `none` (no connection files), or why its connections are missing. */
export const ProjectStatusSchema = z.object({
  path: z.string(),
  root: z.string().optional(),
  /** `none`: the folder is not trusted and holds no connection files, so there is nothing to ask for. */
  status: z.enum(['ok', 'untrusted', 'error', 'none']),
  message: z.string().optional(),
  /** The connection the project's first matching source yields (`project:<name>`), if any. */
  primary: z.string().nullable().optional(),
});
export type ProjectStatus = z.infer<typeof ProjectStatusSchema>;

export const ConnectionListSchema = z.object({ connections: z.array(ConnectionInfoSchema), project: ProjectStatusSchema.optional() });
export type ConnectionList = z.infer<typeof ConnectionListSchema>;

export const ConnectionTestResultSchema = z.object({
  name: z.string(),
  ok: z.literal(true),
  latencyMs: z.number(),
  serverVersion: z.string().optional(),
  /** Warnings for the person: the login can read credentials (a superuser, pg_read_all_data, SELECT on mysql.*). */
  advice: z.array(z.string()).optional(),
});
export type ConnectionTestResult = z.infer<typeof ConnectionTestResultSchema>;

export const ClientInfoSchema = z.object({
  name: z.string().max(200),
  version: z.string().max(100).optional(),
});

export const OpenSessionRequestSchema = z.strictObject({
  client: ClientInfoSchema,
  project: z.string().max(4096).optional(),
  pid: z.number().int().optional(),
  connection: ConnectionRefSchema.optional(),
});
export type OpenSessionRequest = z.infer<typeof OpenSessionRequestSchema>;

export const SessionUpdateSchema = z.strictObject({
  connection: ConnectionRefSchema.nullable().optional(),
  project: z.string().max(4096).optional(),
  client: ClientInfoSchema.optional(),
});
export type SessionUpdate = z.infer<typeof SessionUpdateSchema>;

export const SessionInfoSchema = z.object({
  id: z.string(),
  client: ClientInfoSchema,
  project: z.string().optional(),
  pid: z.number().optional(),
  connection: z.string().nullable(),
  calls: z.number().int(),
  startedAt: z.string(),
  lastSeenAt: z.string(),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

export { MAX_PARAMS, MAX_SQL_LENGTH };
export const DEFAULT_MAX_ROWS = 100;
export const MAX_MAX_ROWS = 10_000;
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Which MCP tool a call came from (`run_query`, a catalog tool), for the audit trail. */
export const ToolNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'use a tool name such as run_query');

export const QueryRequestSchema = z.strictObject({
  session: z.string().max(100).optional(),
  connection: ConnectionRefSchema,
  /** The caller's project folder, against which a `project:<name>` connection is resolved. */
  project: z.string().max(4096).optional(),
  sql: z.string().min(1, 'sql is empty').max(MAX_SQL_LENGTH),
  params: z.array(ParamSchema).max(MAX_PARAMS).optional(),
  maxRows: z.number().int().min(1).max(MAX_MAX_ROWS).optional(),
  timeoutMs: z.number().int().min(100).max(600_000).optional(),
  /** Context parameter values from the caller's configuration (never from the agent). */
  context: z.record(z.string().max(64), z.string().max(65_536)).optional(),
  /** The tool the shim ran this call for; recorded in the audit trail. */
  tool: ToolNameSchema.optional(),
});
export type QueryRequest = z.infer<typeof QueryRequestSchema>;

export const ColumnSchema = z.object({ name: z.string(), type: z.string() });
export type Column = z.infer<typeof ColumnSchema>;

/** JSON-safe cell values: 64-bit integers and decimals beyond 2^53 travel as strings. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const QueryResultSchema = z.object({
  columns: z.array(ColumnSchema),
  rows: z.array(z.record(z.string(), z.unknown())),
  rowCount: z.number().int(),
  truncated: z.boolean(),
  /** Rows changed, for a write on a writable connection. */
  affectedRows: z.number().int().optional(),
  durationMs: z.number(),
  /** Present when the byte cap cut cells or left rows out. */
  cut: ResultCutSchema.optional(),
  /** A write that awaited a person: who approved it, after how long. */
  approval: ApprovalDecisionSchema.optional(),
});
export type QueryResult = z.infer<typeof QueryResultSchema>;

export const PoolStatsSchema = z.object({
  key: z.string(),
  engine: EngineSchema,
  target: z.string(),
  connections: z.array(z.string()),
  total: z.number().int(),
  idle: z.number().int(),
  inUse: z.number().int(),
  waiting: z.number().int(),
  /**
   * Connections given up (a call's timeout or cancel the server had not acted on, a lost or broken
   * one) whose server session is not gone yet: not in `total`, but they count against `max` and
   * against the share of the session whose call left them.
   */
  ending: z.number().int(),
  created: z.number().int(),
  destroyed: z.number().int(),
  errors: z.number().int(),
  max: z.number().int(),
  min: z.number().int(),
  /** Connections one MCP session may hold at once: half of max, at least one. */
  perSession: z.number().int(),
});
export type PoolStats = z.infer<typeof PoolStatsSchema>;

export const PoolListSchema = z.object({ pools: z.array(PoolStatsSchema) });

export const StatusSchema = z.object({
  daemon: HealthSchema,
  pools: z.array(PoolStatsSchema),
  sessions: z.array(SessionInfoSchema),
});
export type Status = z.infer<typeof StatusSchema>;

export const SessionListSchema = z.object({ sessions: z.array(SessionInfoSchema) });
export type SessionList = z.infer<typeof SessionListSchema>;

/** How a recorded call ended: ran, failed (with an error code), or refused by the statement policy (with the rule). */
export const AuditOutcomeSchema = z.enum(['ok', 'error', 'refused']);
export type AuditOutcome = z.infer<typeof AuditOutcomeSchema>;

/**
 * One tool call in the audit trail (`GET /v1/audit`, `hanactl audit --json`). Parameter values
 * and context values are never recorded, only how many parameters there were.
 */
export const AuditRecordSchema = z.object({
  id: z.number().int(),
  /** When the call arrived, ISO 8601 UTC. */
  at: z.string(),
  queryId: z.string(),
  session: z.string().nullable(),
  client: z.string().nullable(),
  clientVersion: z.string().nullable(),
  project: z.string().nullable(),
  connection: z.string(),
  tool: z.string().nullable(),
  /** The statement as the agent sent it. */
  statement: z.string(),
  paramCount: z.number().int(),
  rows: z.number().int().nullable(),
  truncated: z.boolean().nullable(),
  durationMs: z.number(),
  outcome: AuditOutcomeSchema,
  errorCode: z.string().nullable(),
  /** The policy rule that refused the statement. */
  rule: z.string().nullable(),
  /** A write that awaited a person: the decision and who made it. */
  approval: ApprovalDecisionSchema.nullable().optional(),
  /** A call of a signed-in caller (MCP over HTTP with OAuth): the access token's subject and its issuer. */
  subject: z.string().nullable().optional(),
  issuer: z.string().nullable().optional(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

export const AuditListSchema = z.object({ records: z.array(AuditRecordSchema) });
export type AuditList = z.infer<typeof AuditListSchema>;

export const DEFAULT_AUDIT_LIMIT = 50;
export const MAX_AUDIT_LIMIT = 10_000;

/**
 * `GET /v1/audit` query string. Without `after`: the newest `limit` records, oldest first.
 * With `after` (a record id): the records after it, oldest first (`--follow` polls with it).
 * `since` is an age (`30m`, `1h`, `2d`) or an ISO timestamp.
 */
export const AuditQuerySchema = z.strictObject({
  session: z.string().max(100).optional(),
  connection: ConnectionRefSchema.optional(),
  since: z.string().max(100).optional(),
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIMIT).optional(),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

/** A statement running now (`GET /v1/queries`, `hanactl queries --json`). */
export const RunningQuerySchema = z.object({
  id: z.string(),
  session: z.string().nullable(),
  client: z.string().nullable(),
  connection: z.string(),
  tool: z.string().nullable(),
  startedAt: z.string(),
  ageMs: z.number(),
  /** The first 200 characters of the statement. */
  sql: z.string(),
  /** A cancel was asked for and the statement has not stopped yet. */
  cancelling: z.boolean(),
  /** A write waiting for a person (`hanactl approve|deny <id>`); its `sql` is then the whole statement. */
  awaitingApproval: z.object({ timeoutSeconds: z.number().int(), expiresAt: z.string(), leftMs: z.number() }).optional(),
  /**
   * A write waiting for a person: the values bound to its parameters, each as a literal (a string
   * quoted), control and format characters escaped, one longer than 200 characters cut with its
   * whole length said. The person decides on the statement with these values.
   */
  params: z.array(z.string()).optional(),
});
export type RunningQuery = z.infer<typeof RunningQuerySchema>;

export const RunningQueryListSchema = z.object({ queries: z.array(RunningQuerySchema) });
export type RunningQueryList = z.infer<typeof RunningQueryListSchema>;

/** `POST /v1/queries/:id/cancel`: `stopped` once the statement ended within the wait. */
export const CancelResultSchema = z.object({ id: z.string(), cancelled: z.literal(true), stopped: z.boolean() });
export type CancelResult = z.infer<typeof CancelResultSchema>;
