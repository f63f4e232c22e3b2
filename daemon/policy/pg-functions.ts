import { attributeCallObjection, nameAfterDot, opaqueAttributeObjection } from './attribute-calls.js';
import { deniedFunctionName } from './denied-functions.js';
import { pgStatisticsFunctionObjection } from './executor-statistics.js';
import { categoryObjection, contextSettingObjection, isContextSetting, objection, readOnly } from './objections.js';
import {
  PG_DENIED_RELATIONS,
  PG_FUNCTIONS_SERVER_MAJOR,
  PG_KNOWN_PG_NAMES,
  PG_MAINTENANCE_LOCKS,
  PG_NAMES_RELATION,
  PG_NAMES_SCHEMA,
  PG_REFUSED,
  PG_RUNS_SQL,
  PG_SECRET_VIEWS,
  PG_STATEMENT_TEXT_FUNCTIONS,
  PG_VOLATILE_UNREVIEWED,
  PG_VOLATILE_WRITES,
} from './pg-functions.generated.js';
import { postgresRelationCodeRule, relationCodeUnnamedObjection } from './relation-code.js';
import { callName, isPunct, keywordAt } from './tokens.js';
import type { Objection, Token } from './types.js';

// PostgreSQL's functions and views as classified from pg_proc of a real server
// (scripts/policy/pg-functions.mjs). Both checks use these: the token rules and PostgreSQL's parser.
// Names are compared in lower case: a quoted name in another case only refuses more.

const lower = <T>(record: Readonly<Record<string, T>>): Map<string, T> =>
  new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));

const REFUSED = lower(PG_REFUSED);
const RUNS_SQL = lower(PG_RUNS_SQL);
const NAMES_RELATION = lower(PG_NAMES_RELATION);
const NAMES_SCHEMA = lower(PG_NAMES_SCHEMA);
const DENIED_RELATIONS = lower(PG_DENIED_RELATIONS);
const WRITES = new Set(PG_VOLATILE_WRITES.map((n) => n.toLowerCase()));
const MAINTENANCE = new Set(PG_MAINTENANCE_LOCKS.map((n) => n.toLowerCase()));
const UNREVIEWED = new Set(PG_VOLATILE_UNREVIEWED.map((n) => n.toLowerCase()));
const KNOWN_PG = new Set(PG_KNOWN_PG_NAMES);
const SECRET_VIEWS = lower(PG_SECRET_VIEWS);
const STATEMENT_TEXT = new Set(PG_STATEMENT_TEXT_FUNCTIONS);

const STATEMENT_TEXT_HINT =
  "To see what runs now, ask a person: `hanactl queries` lists the statements hanactl is running, and a DBA tool (psql) shows the server's sessions.";

/** The refusal for reading other sessions' statement text through `what`. */
const statementTextObjection = (what: string): Objection =>
  objection(
    'credential-read',
    `Refused: ${what} shows the text of other sessions' statements, which can hold passwords in clear (ALTER ROLE ... PASSWORD '...'); hanactl does not return it on any connection, in any form.`,
    STATEMENT_TEXT_HINT,
  );

const DOES = {
  'pastes-sql': 'builds SQL from its arguments or reaches another connection, which cannot be checked here',
  'host-files': 'reads or writes files on the database host',
  'server-control': 'changes the server or other sessions in a way no transaction rolls back',
  'session-state': 'changes the session beyond the call (a seed, a lock, a setting or a wait)',
} as const;

/**
 * The refusal for calling the PostgreSQL function `name` (lower case, unqualified), or undefined.
 * Refused on every connection: what pastes SQL, reads host files, controls the server or outlives
 * the call, volatile functions nobody reviewed, and pg_* names the classified server lacks. Refused on read-only connections: volatile
 * functions whose changes belong to the transaction (nextval, pg_notify, lo_create), and maintenance checks that hold a lock
 * blocking other sessions' writes while they run (amcheck's bt_index_parent_check).
 */
export function pgFunctionObjection(name: string, allowWrite: boolean): Objection | undefined {
  if (STATEMENT_TEXT.has(name)) return statementTextObjection(`${name}()`);
  if (READS_ALL_RELATIONS.has(name)) {
    return objection(
      'denied-function',
      `Refused: ${name}() reads every relation of a schema or of the database without naming one, so what it reads (views over the server's catalogs of roles and sessions included) cannot be checked.`,
      "Name each table: table_to_xml('schema.table', ...), or SELECT from it directly.",
    );
  }
  const why = REFUSED.get(name);
  if (why) {
    return objection('denied-function', `Refused: ${name}() ${DOES[why]}.`, `Remove ${name}(); hanactl does not run it on any connection.`);
  }
  if (UNREVIEWED.has(name)) {
    return objection(
      'denied-function',
      `Refused: ${name}() is a volatile PostgreSQL function that is not on hanactl's list of functions reviewed as free of side effects.`,
      `Remove ${name}(); hanactl does not run it on any connection.`,
    );
  }
  if (name.startsWith('pg_') && !KNOWN_PG.has(name)) {
    // A server function of a later release (or a misspelling): its effects were never classified.
    return objection(
      'denied-function',
      `Refused: ${name}() is not a PostgreSQL ${PG_FUNCTIONS_SERVER_MAJOR} function, and hanactl runs only pg_* functions it has classified.`,
      `Remove ${name}(), or ask a person to regenerate hanactl's function list for this server (node scripts/policy/pg-functions.mjs).`,
    );
  }
  if (WRITES.has(name) && !allowWrite) return readOnly('denied-function', `${name}() writes to the database`, `Remove ${name}()`);
  if (MAINTENANCE.has(name) && !allowWrite) {
    return readOnly(
      'denied-function',
      `${name}() is a maintenance check that holds a lock blocking other sessions' writes to the table while it runs`,
      `Remove ${name}()`,
    );
  }
  return undefined;
}

/**
 * The refusal for `name` (lower case) written after a dot, which PostgreSQL reads as the call
 * name(value) where no column has that name (attribute-calls.ts), or undefined: every rule a call
 * name(x) meets (set_config, the denied functions, the classification from pg_proc, where rows are
 * separated the executor's statistics), and a function that runs SQL text or reads a relation its
 * argument names, whose argument is here no string literal to check. A pg_* name the classified
 * server lacks is not refused here, as it is for a call: after a dot it is far more often a
 * relation's name (pg_catalog.pg_class.relname).
 */
export function pgAttributeFunctionObjection(name: string, allowWrite: boolean, rowSeparation: boolean): Objection | undefined {
  const unknownPg = name.startsWith('pg_') && !KNOWN_PG.has(name);
  const inner =
    (name === 'set_config' ? categoryObjection('session-change', 'set_config()') : undefined) ??
    deniedFunctionName(name, allowWrite) ??
    (unknownPg ? undefined : pgFunctionObjection(name, allowWrite)) ??
    relationCodeUnnamedObjection(name) ??
    (rowSeparation ? pgStatisticsFunctionObjection(name) : undefined) ??
    (RUNS_SQL.has(name) || NAMES_RELATION.has(name) || NAMES_SCHEMA.has(name)
      ? objection(
          'embedded-sql',
          `Refused: ${name}() runs the SQL text, or reads the relation or schema, its argument names, and called this way its argument is no plain string literal to check.`,
          `Call ${name}(...) with the text or the name as one plain string literal.`,
        )
      : undefined);
  return attributeCallObjection(name, inner);
}

/** Functions that read the rows of every relation of a schema or database, named by none. */
const READS_ALL_RELATIONS: ReadonlySet<string> = new Set([
  'schema_to_xml',
  'schema_to_xml_and_xmlschema',
  'database_to_xml',
  'database_to_xml_and_xmlschema',
]);

/** Positions of the arguments that name, as regclass text, a relation `name` reads (table_to_xml). */
export function relationArgumentPositions(name: string, argCount: number): readonly number[] | undefined {
  return NAMES_RELATION.get(name)?.[argCount];
}

/** Whether some overload of `name` runs a text argument as SQL. */
export const runsSql = (name: string): boolean => RUNS_SQL.has(name);

/** Positions of the arguments that `name` runs as SQL when called with `argCount` arguments. */
export function sqlArgumentPositions(name: string, argCount: number): readonly number[] | undefined {
  return RUNS_SQL.get(name)?.[argCount];
}

/** The last part of a relation or schema name as PostgreSQL folds it: `s."T"` -> T, `s.t` -> t. */
function lastPart(text: string): string {
  const part = text.trim().split('.').at(-1)?.trim() ?? '';
  return part.startsWith('"') && part.endsWith('"') && part.length >= 2 ? part.slice(1, -1).replaceAll('""', '"') : part.toLowerCase();
}

/**
 * Catalogs and views whose columns hold password hashes or connection passwords: pg_authid
 * (rolpassword), pg_shadow (passwd), pg_user_mapping(s) (umoptions), pg_subscription
 * (subconninfo). Refused whatever the role may read; pg_roles masks rolpassword itself.
 */
const CREDENTIAL_RELATIONS = new Set(['pg_authid', 'pg_shadow', 'pg_user_mapping', 'pg_user_mappings', 'pg_subscription']);

/**
 * Planner statistics: sample values of every column the role may read, pg_authid.rolpassword and
 * pg_user_mapping.umoptions included for a superuser or a pg_read_all_data member. Which rows a
 * query keeps cannot be proven from its text, so they are refused whole.
 */
const STATISTICS_RELATIONS = new Set(['pg_statistic', 'pg_statistic_ext_data', 'pg_stats', 'pg_stats_ext', 'pg_stats_ext_exprs']);

/** Every pg_catalog relation whose rows are refused: credentials, statistics and views that read server files. */
export const PG_REFUSED_RELATION_NAMES: readonly string[] = [
  ...CREDENTIAL_RELATIONS,
  ...STATISTICS_RELATIONS,
  ...Object.keys(PG_DENIED_RELATIONS),
  ...Object.keys(PG_SECRET_VIEWS).filter((name) => !CREDENTIAL_RELATIONS.has(name) && !STATISTICS_RELATIONS.has(name)),
].sort();

/**
 * Tables hanactl itself installs that hold a secret: the context signing keys of `hanactl
 * context-sql` (context_keys: the key, as HMAC pads). Refused by name in any schema, and by the
 * resolve step wherever a view or function reaches one.
 */
export const PG_HANACTL_SECRET_RELATIONS: readonly string[] = ['context_keys'];

/**
 * Storage (TOAST) tables: relkind t, in schema pg_toast (pg_toast_temp_N for a temporary
 * relation's), each named pg_toast_<OID of the relation it serves> (toasting.c). Their rows are
 * another relation's out-of-line values (chunk_data): pg_toast_2619 holds pg_statistic's large
 * sample arrays, pg_authid's password verifiers among them; pg_toast_1260 pg_authid's own. Whatever
 * the rules say of the owning relation (credentials, statistics, row security) they would bypass,
 * so the schemas and the table names are refused on every connection, and the resolve step
 * refuses any relation of relkind t it reaches by OID (postgres-reach.ts).
 */
export const PG_STORAGE_NAME = /^pg_toast(?:_temp_[0-9]+|_[0-9]+)?$/;

/** The refusal for reading `what`, a storage (TOAST) table or its schema, or what reads one; `owner`, the relation it serves, when known. */
export function storageTableObjection(what: string, owner?: string): Objection {
  return objection(
    'storage-table',
    `Refused: ${what} stores the out-of-line values of ${owner || 'another relation'} (a TOAST table): reading it would bypass every rule that judges that relation (password hashes, planner statistics, row security), so hanactl does not read it on any connection.`,
    'Select from the owning table itself; its large values are returned there.',
  );
}

/**
 * Settings only a superuser (or a pg_read_all_settings member) reads that can hold a password or
 * a command with one: a standby's connection string (primary_conninfo) and the shell commands the
 * server runs (restore_command, archive_command, archive_cleanup_command, recovery_end_command,
 * ssl_passphrase_command). guc.c looks names up case-insensitively.
 */
export const PG_SECRET_SETTINGS: readonly string[] = [
  'primary_conninfo',
  'restore_command',
  'archive_command',
  'archive_cleanup_command',
  'recovery_end_command',
  'ssl_passphrase_command',
];

const SECRET_SETTINGS: ReadonlySet<string> = new Set(PG_SECRET_SETTINGS);

/** The refusal for a token that names a setting that can hold a secret (SHOW x, current_setting('x'), pg_settings' name = 'x'), or undefined. */
export function secretSettingObjection(token: Token): Objection | undefined {
  if (token.kind !== 'word' && token.kind !== 'quoted' && token.kind !== 'string') return undefined;
  if (token.text.length > MAX_SETTING_NAME || !SECRET_SETTINGS.has(token.text.trim().toLowerCase())) return undefined;
  const name = token.text.trim().toLowerCase();
  return objection(
    'credential-read',
    `Refused: the setting ${name} can hold a password or a command that carries one, which hanactl does not return on any connection.`,
    "Read other settings with current_setting('name') or SHOW name.",
  );
}

/** Longer than every name in SECRET_SETTINGS, with room for white space around it. */
const MAX_SETTING_NAME = 64;

/** PostgreSQL's NAMEDATALEN - 1. */
const MAX_IDENTIFIER_BYTES = 63;

/** The refusal for reading the relation `name` (as written, quotes folded), or undefined. */
export function deniedRelationObjection(name: string): Objection | undefined {
  // PostgreSQL cuts a longer name to its first 63 bytes, which is longer than every refused name;
  // and a megabyte-long word is not folded again and again.
  if (name.length > MAX_IDENTIFIER_BYTES) return undefined;
  if (PG_STORAGE_NAME.test(name)) return storageTableObjection(name);
  if (PG_HANACTL_SECRET_RELATIONS.includes(name.toLowerCase())) {
    return objection(
      'credential-read',
      `Refused: ${name} holds hanactl's context signing keys, which hanactl does not return on any connection: with the key, a context value could be forged.`,
      'Read context values with the verifying function (hanactl.context(name)) instead.',
    );
  }
  if (CREDENTIAL_RELATIONS.has(name.toLowerCase())) {
    return objection(
      'credential-read',
      `Refused: ${name} holds password hashes or connection passwords, which hanactl does not return on any connection.`,
      'Read roles from pg_roles (which masks passwords) and mappings from pg_foreign_server instead.',
    );
  }
  if (STATISTICS_RELATIONS.has(name.toLowerCase())) {
    return objection(
      'credential-read',
      `Refused: ${name} holds sample values of every column, password hashes in the catalogs included, which hanactl does not return on any connection.`,
      'For row counts and plans use list_tables (row estimates), describe_table or explain_query.',
    );
  }
  // Views of the server's own schemas that show what the sets above hold, found by reading every
  // view's definition on a real server (scripts/policy/pg-functions.mjs): information_schema's
  // user_mapping_options, pg_stat_activity, pg_stat_statements, ...
  const source = SECRET_VIEWS.get(name.toLowerCase());
  if (source && STATEMENT_TEXT.has(source)) return statementTextObjection(name);
  if (source) {
    return objection(
      'credential-read',
      `Refused: ${name} shows what ${source} holds (password hashes, connection passwords or sample values of every column), which hanactl does not return on any connection.`,
      'Read roles from pg_roles (which masks passwords) and mappings from pg_foreign_server instead.',
    );
  }
  const through = DENIED_RELATIONS.get(name.toLowerCase());
  if (!through) return undefined;
  return objection(
    'host-access',
    `Refused: ${name} reads files on the database host (through ${through}()), which hanactl does not allow on any connection.`,
    'Read the data with a SELECT on ordinary tables instead; files on the host are out of reach by design.',
  );
}

/**
 * For a function that reads a relation or every relation of a schema named by an argument
 * (table_to_xml, schema_to_xml): the refusal when that argument (`text`, the string constant, or
 * undefined when it is not one) cannot be checked or names what is refused.
 */
export function namedRelationObjection(
  name: string,
  argCount: number,
  text: (position: number) => string | undefined,
): Objection | undefined {
  const unchecked = objection(
    'embedded-sql',
    `Refused: ${name}() reads the relation or schema named by its argument, which is not a plain string literal here.`,
    'Name the table or schema as one plain string literal, or SELECT from it directly.',
  );
  for (const position of NAMES_RELATION.get(name)?.[argCount] ?? []) {
    const value = text(position);
    if (value === undefined) return unchecked;
    // regclass input reads digits as an OID ('1260' is pg_authid): only a name can be checked.
    if (/^\s*[0-9+-]/.test(value) || value.trim() === '') {
      return objection(
        'embedded-sql',
        `Refused: ${name}() is given the relation as a number (an OID) or nothing, which names no relation this check can judge.`,
        'Name the table as one plain string literal (schema.table), or SELECT from it directly.',
      );
    }
    const denied = deniedRelationObjection(lastPart(value));
    if (denied) return denied;
  }
  for (const position of NAMES_SCHEMA.get(name)?.[argCount] ?? []) {
    const value = text(position);
    if (value === undefined) return unchecked;
    if (lastPart(value) === 'pg_catalog') {
      return objection(
        'host-access',
        `Refused: ${name}('pg_catalog') reads the catalog's views, some of which read files on the database host.`,
        'Name another schema, or SELECT from the catalog views you need.',
      );
    }
  }
  return undefined;
}

/** For each `(`, the index of its `)` (or the end): computed once, so splitting calls' arguments stays linear. */
export function matchParens(tokens: readonly Token[]): Int32Array {
  const close = new Int32Array(tokens.length).fill(tokens.length);
  const open: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) open.push(i);
    else if (isPunct(tokens[i], ')')) {
      const at = open.pop();
      if (at !== undefined) close[at] = i;
    }
  }
  return close;
}

/**
 * The top-level arguments of the call whose `(` is at `open`, as [start, end) index ranges; nested
 * parentheses are skipped whole, so the cost is the call's own top-level tokens.
 */
export function callArguments(tokens: readonly Token[], open: number, close: Int32Array): [number, number][] {
  const end = close[open] ?? tokens.length;
  const args: [number, number][] = [];
  let start = open + 1;
  for (let i = open + 1; i < end; i++) {
    if (isPunct(tokens[i], '(')) i = close[i] ?? tokens.length;
    else if (isPunct(tokens[i], ',')) {
      args.push([start, i]);
      start = i + 1;
    }
  }
  if (start < end || args.length > 0) args.push([start, end]);
  return args;
}

/** A plain string literal argument's value (the range holds exactly one unescaped string), or undefined. */
export function literalArgument(tokens: readonly Token[], range: readonly [number, number] | undefined): string | undefined {
  const token = range && range[1] - range[0] === 1 ? tokens[range[0]] : undefined;
  return token?.kind === 'string' && !token.opaque ? token.text : undefined;
}

/** The token's name as PostgreSQL reads it: a word folded to lower case, a quoted identifier as written. */
const nameOf = (token: Token | undefined): string | undefined =>
  token?.kind === 'word' ? token.text.toLowerCase() : token?.kind === 'quoted' ? token.text : undefined;

/**
 * The setting named after the keyword SET at `k` (`SET mcp.x`, a function's `SET mcp.x = ...`,
 * `ALTER ROLE ... SET "mcp.x"`), lower-cased as PostgreSQL looks settings up; undefined elsewhere.
 */
function settingAfterSet(tokens: readonly Token[], k: number): string | undefined {
  if (keywordAt(tokens, k) !== 'SET') return undefined;
  const parts: string[] = [];
  for (let i = k + 1; ; i += 2) {
    const part = nameOf(tokens[i]);
    if (part === undefined) break;
    parts.push(part);
    if (!isPunct(tokens[i + 1], '.')) break;
  }
  return parts.length > 0 ? parts.join('.').toLowerCase() : undefined;
}

/**
 * The token rules' side of PostgreSQL's function and view classification: each call by its name
 * (and, for functions that read a named relation, its argument), each name after a dot as the call
 * PostgreSQL may read it as (pgAttributeFunctionObjection), and each name that is a view reading
 * server files, wherever it appears.
 */
export function postgresTokenObjection(tokens: readonly Token[], allowWrite: boolean): Objection | undefined {
  let close: Int32Array | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    const secret = secretSettingObjection(token);
    if (secret) return secret;
    const setting = settingAfterSet(tokens, k);
    if (setting && isContextSetting(setting)) return contextSettingObjection(setting);
    const name = callName(tokens, k);
    if (name === undefined) {
      if ((token.kind === 'word' || token.kind === 'quoted') && token.text.length <= MAX_IDENTIFIER_BYTES) {
        const denied = deniedRelationObjection(token.kind === 'word' ? token.text.toLowerCase() : token.text);
        if (denied) return denied;
      }
      // After a dot, also the call PostgreSQL may read the name as (a relation's name is judged as one first).
      const attribute = nameAfterDot(tokens, k);
      if (attribute?.opaque) return opaqueAttributeObjection();
      const refused = attribute && pgAttributeFunctionObjection(attribute.text.toLowerCase(), allowWrite, false);
      if (refused) return refused;
      continue;
    }
    const refused = pgFunctionObjection(name, allowWrite);
    if (refused) return refused;
    if (NAMES_RELATION.has(name) || NAMES_SCHEMA.has(name)) {
      close ??= matchParens(tokens);
      const args = callArguments(tokens, k + 1, close);
      const named = namedRelationObjection(name, args.length, (position) => literalArgument(tokens, args[position]));
      if (named) return named;
    }
  }
  return postgresRelationCodeRule(tokens);
}
