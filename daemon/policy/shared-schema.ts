import type { DialectPolicy } from './dialects.js';
import { objection } from './objections.js';
import { leadingKind } from './statement-kinds.js';
import { isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * Where rows are separated by context values, every caller of a connection runs as its one login,
 * so an object one caller makes is in the schema of every other: a table ahead of the person's on
 * the search path (`"$user", public`) takes another caller's reads and writes, and a function whose
 * SET clause gives back the server's costs (`SET cpu_operator_cost = 0.0025`) runs its own
 * conditions before the row-security policy, for every later call of the login. So on a writable
 * connection whose rows are separated, the agent may change rows, not the schema or permissions:
 * statements of the `ddl` leading-keyword category (CREATE, ALTER, DROP, TRUNCATE, RENAME, GRANT,
 * REVOKE, COMMENT, SECURITY LABEL, IMPORT FOREIGN SCHEMA) and an anonymous block, which runs any of
 * them as text (DO, EXECUTE, EXEC). On PostgreSQL the parser check allows only the statement kinds
 * such a connection needs (SHARED_SCHEMA_KINDS). Judged after every other rule, so that their more
 * specific refusals (role-state, context-code) keep their names.
 */

/**
 * The refusal of `label` on a writable connection whose rows are separated by context values, or
 * (`sharedLogin`) one without context names whose login also backs a connection with them: what it
 * makes or replaces (a function, a view) runs in their calls, and one replaced between a call's
 * check and its statement runs there unjudged.
 */
export function sharedSchemaObjection(label: string, sharedLogin = false): Objection {
  if (sharedLogin)
    return objection(
      'shared-schema',
      `Refused: ${label} changes the schema or permissions, and this connection's login also backs a connection with context names, whose calls meet what it makes or replaces: a function or view changed here between such a call's check and its statement would run there unjudged, and could read or change rows its context values hide.`,
      'Ask a person to make the change, or to register schema changes under a login of their own that no connection with context names uses.',
    );
  return objection(
    'shared-schema',
    `Refused: ${label} changes the schema or permissions, and every caller of this connection's login shares its schema: what one caller makes there (a table ahead of another's on the search path, a function with its own settings) would be met by every other caller, whose rows are separated by context values.`,
    'Change rows only (SELECT, INSERT, UPDATE, DELETE, MERGE), or use a connection without context names for schema changes, or ask a person to make them.',
  );
}

/** The token rule: a schema change, or a block that may run one, refused where rows are separated on a writable connection. */
export function sharedSchemaTokenRule(tokens: readonly Token[], dialect: DialectPolicy, sharedLogin = false): Objection | undefined {
  const lead = leadingKind(tokens);
  if (lead?.category === 'ddl') return sharedSchemaObjection(lead.label, sharedLogin);
  const first = tokens[leadIndex(tokens)];
  // An anonymous block (PostgreSQL, SAP HANA) or text run as a statement (SAP HANA EXEC): it may run any DDL.
  if (isWord(first, 'DO') && !dialect.doEvaluatesExpressions) return sharedSchemaObjection('DO', sharedLogin);
  if (isWord(first, 'EXECUTE', 'EXEC')) return sharedSchemaObjection(first?.text ?? 'EXECUTE', sharedLogin);
  // EXPLAIN ANALYZE runs what it wraps, CREATE TABLE ... AS and CREATE MATERIALIZED VIEW among it
  // (CREATE is a reserved word: no name spells it unquoted).
  if (isWord(first, 'EXPLAIN') && tokens.some((token) => isWord(token, 'CREATE'))) return sharedSchemaObjection('EXPLAIN ... CREATE', sharedLogin);
  return undefined;
}

/**
 * The statement kinds PostgreSQL's parser may read on a writable connection whose rows are
 * separated: reads and writes of rows, a person's procedures, and the maintenance commands a
 * writable connection runs, which change no object's definition. Any other kind, including one a
 * later PostgreSQL adds, is refused there (the kinds every connection refuses are refused before).
 */
const SHARED_SCHEMA_KINDS: ReadonlySet<string> = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'CallStmt',
  'ExplainStmt',
  'VariableShowStmt',
  'CopyStmt',
  'VacuumStmt',
  'ReindexStmt',
  'ClusterStmt',
  'RefreshMatViewStmt',
  'NotifyStmt',
  'CheckPointStmt',
]);

/**
 * True when PostgreSQL's parse of a statement of `kind` changes the schema or permissions, or may:
 * a kind outside SHARED_SCHEMA_KINDS, or one whose tree holds an INTO clause (`SELECT ... INTO t`
 * creates a table; the server takes it from the leftmost SELECT of a set operation and refuses it
 * anywhere else, so any one counts).
 */
export function changesSharedSchema(kind: string, into: boolean): boolean {
  return !SHARED_SCHEMA_KINDS.has(kind) || into;
}
