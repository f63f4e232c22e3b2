import { mayBeUnqualified, qualifiersAt } from './mysql-names.js';
import { objection } from './objections.js';
import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * MySQL/MariaDB tables in the `mysql` schema whose columns hold password hashes or stored
 * passwords: user (Password, authentication_string), global_priv (Priv), servers (Password),
 * password_history (Password).
 */
const MYSQL_CREDENTIAL_TABLES = ['user', 'global_priv', 'servers', 'password_history'];

/** Names distinctive enough to refuse wherever they appear, qualified or not. */
const ANYWHERE = ['global_priv', 'authentication_string'];

const HINT =
  'Read privileges from information_schema.USER_PRIVILEGES, SCHEMA_PRIVILEGES or TABLE_PRIVILEGES instead; hanactl never returns credentials.';

const refuse = (what: string): Objection =>
  objection(
    'credential-read',
    `Refused: ${what} shows authentication data (password hashes or stored passwords), which hanactl does not return on any connection.`,
    HINT,
  );

/** A name token as the server compares it, lower case; undefined for anything else. */
const nameOf = (token: Token | undefined): string | undefined =>
  token?.kind === 'word' || token?.kind === 'quoted' ? token.text.toLowerCase() : undefined;

/**
 * Tables in the `mysql` schema that hold other sessions' statement text (a DBA's `SET PASSWORD ...
 * PASSWORD('...')` or `CREATE USER ... IDENTIFIED BY '...'` in clear): the general and slow query logs.
 */
const MYSQL_LOG_TABLES = ['general_log', 'slow_log'];

const refuseLog = (what: string): Objection =>
  objection(
    'credential-read',
    `Refused: ${what} holds the text of other sessions' statements, passwords written in them included, which hanactl does not return on any connection.`,
    "Ask a person for the log entries you need; hanactl does not read the server's statement logs.",
  );

/**
 * Tables and views that show other sessions' statement text, by names distinctive enough to refuse
 * wherever they appear: information_schema.PROCESSLIST (INFO) and SHOW [FULL] PROCESSLIST,
 * INNODB_TRX (trx_query), performance_schema's events_statements_* (SQL_TEXT, DIGEST_TEXT,
 * QUERY_SAMPLE_TEXT) and prepared_statements_instances (SQL_TEXT), and the sys schema's views over
 * them (processlist, session, statement_analysis, statements_with_*, innodb_lock_waits,
 * schema_table_lock_waits and their x$ forms), the lock tables that quote another transaction's
 * locked key values (information_schema INNODB_LOCKS, INNODB_LOCK_WAITS; MySQL performance_schema
 * data_locks, data_lock_waits) and sys's functions that return a thread's statements
 * (ps_thread_trx_info, ps_thread_stack). A name ending in `*` covers every name starting so.
 */
const STATEMENT_TEXT_ANYWHERE = [
  'processlist',
  'innodb_locks',
  'innodb_lock_waits',
  'data_locks',
  'data_lock_waits',
  'ps_thread_trx_info',
  'ps_thread_stack',
  'x$processlist',
  'x$session',
  'innodb_trx',
  'prepared_statements_instances',
  'events_statements_*',
  'statement_analysis',
  'x$statement_analysis',
  'statements_with_*',
  'x$statements_with_*',
  'innodb_lock_waits',
  'x$innodb_lock_waits',
  'schema_table_lock_waits',
  'x$schema_table_lock_waits',
];

/** Names too common to refuse anywhere, refused in their schema: performance_schema.threads (PROCESSLIST_INFO), sys.session. */
const STATEMENT_TEXT_IN: Readonly<Record<string, readonly string[]>> = { performance_schema: ['threads'], sys: ['session'] };

const STATEMENT_TEXT_NAMES: ReadonlySet<string> = new Set(STATEMENT_TEXT_ANYWHERE.filter((n) => !n.endsWith('*')));
const STATEMENT_TEXT_PREFIXES: readonly string[] = STATEMENT_TEXT_ANYWHERE.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1));

// A set and a few prefixes, not a scan of the list: this runs once per name of a long statement.
const statementTextName = (name: string): boolean =>
  STATEMENT_TEXT_NAMES.has(name) || STATEMENT_TEXT_PREFIXES.some((prefix) => name.startsWith(prefix));

const refuseStatementText = (what: string): Objection =>
  objection(
    'credential-read',
    `Refused: ${what} shows the text of other sessions' statements, which can hold passwords in clear (SET PASSWORD ... PASSWORD('...'), CREATE USER ... IDENTIFIED BY '...'); hanactl does not return it on any connection, in any form.`,
    "To see what runs now, ask a person: `hanactl queries` lists the statements hanactl is running, and a DBA tool shows the server's sessions.",
  );

/**
 * The SHOW statements (MariaDB's `mysql.help_topic` list, MySQL's grammar) that show another
 * session's statement text, plan or constants, by the words after SHOW from `at`; undefined for the
 * rest. SHOW ENGINE <any> STATUS|MUTEX|LOGS (InnoDB's TRANSACTIONS section prints each active
 * transaction's statement) and its old forms SHOW INNODB|MUTEX STATUS; SHOW EXPLAIN|ANALYZE
 * [FORMAT=...] FOR <thread> (the plan's attached conditions hold the other statement's literals);
 * SHOW SLAVE|REPLICA [<name>] STATUS and SHOW ALL SLAVES|REPLICAS STATUS (Last_SQL_Error quotes a
 * replicated statement). SHOW PROCESSLIST is refused by name. SHOW PROFILE(S), WARNINGS and ERRORS
 * show the caller's own session only and stay allowed.
 */
function otherSessionsShow(tokens: readonly Token[], at: number): string | undefined {
  const first = tokens[at];
  const word = first?.text ?? '';
  if (isWord(first, 'ENGINE')) return `SHOW ENGINE ${tokens[at + 1]?.text ?? ''}`.trim();
  if (isWord(first, 'INNODB', 'MUTEX') && isWord(tokens[at + 1], 'STATUS')) return `SHOW ${word} STATUS`;
  if (isWord(first, 'EXPLAIN', 'ANALYZE')) return `SHOW ${word} FOR`;
  const replica = isWord(first, 'ALL') ? at + 1 : at;
  if (isWord(tokens[replica], 'SLAVE', 'SLAVES', 'REPLICA', 'REPLICAS')) {
    for (let k = replica + 1; k < tokens.length && k <= replica + 3; k++)
      if (isWord(tokens[k], 'STATUS')) return `SHOW ${tokens[replica]?.text} STATUS`;
  }
  return undefined;
}

/**
 * The server variable that holds a credential in clear: report_password, the password a replica
 * reports to its primary, which MariaDB (and MySQL) show to any login in SHOW VARIABLES, @@name
 * and the variables tables. wsrep_sst_auth holds one too, but MariaDB shows it as `********`
 * (wsrep_sst_auth_init), so reading it returns no secret.
 */
const SECRET_VARIABLE = 'report_password';

/**
 * The tables and views that list every server variable with its value: information_schema's
 * GLOBAL_VARIABLES, SESSION_VARIABLES and SYSTEM_VARIABLES (MariaDB), and performance_schema's
 * global_variables, session_variables, variables_by_thread and persisted_variables (MySQL).
 */
const VARIABLE_TABLES: ReadonlySet<string> = new Set([
  'global_variables',
  'session_variables',
  'system_variables',
  'variables_by_thread',
  'persisted_variables',
]);

const refuseVariable = (what: string): Objection =>
  objection(
    'credential-read',
    `Refused: ${what} can show the server variable ${SECRET_VARIABLE} (a replica's password, in clear), which hanactl does not return on any connection.`,
    `Read other variables by name: @@name, SHOW VARIABLES LIKE 'name', or WHERE VARIABLE_NAME = 'name' on one variables table; never ${SECRET_VARIABLE}.`,
  );

/** True when `pattern`, read as a LIKE pattern (% any run, _ any character, \ escaping the next), matches `name` case-insensitively. */
function likeMatches(pattern: string, name: string): boolean {
  let source = '';
  for (let k = 0; k < pattern.length; k++) {
    const ch = pattern[k] as string;
    if (ch === '\\' && k + 1 < pattern.length) source += escapeRegExp(pattern[++k] as string);
    else if (ch === '%') source += '[\\s\\S]*';
    else if (ch === '_') source += '[\\s\\S]';
    else source += escapeRegExp(ch);
  }
  return new RegExp(`^${source}$`, 'i').test(name);
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True for a string constant the checks read as the server does, whose value is not the secret variable's name (as a PAD SPACE collation compares). */
const namesOtherVariable = (token: Token | undefined): boolean =>
  token?.kind === 'string' && !token.opaque && token.text.trimEnd().toLowerCase() !== SECRET_VARIABLE;

/** True when the tokens from `at` end the statement (nothing, or one `;`). */
const endsAt = (tokens: readonly Token[], at: number): boolean =>
  at === tokens.length || (at === tokens.length - 1 && isPunct(tokens[at], ';'));

/** True when the tokens from `at` are `WHERE VARIABLE_NAME = '<another variable>'` and the statement's end. */
function whereOneOtherVariable(tokens: readonly Token[], at: number): boolean {
  return (
    isWord(tokens[at], 'WHERE') &&
    nameOf(tokens[at + 1]) === 'variable_name' &&
    isPunct(tokens[at + 2], '=') &&
    namesOtherVariable(tokens[at + 3]) &&
    endsAt(tokens, at + 4)
  );
}

/**
 * SHOW [GLOBAL | SESSION | LOCAL] VARIABLES from `at` (the word after SHOW), refused unless it
 * names one constant variable other than report_password: `LIKE '<pattern>'` that does not match
 * it, or `WHERE VARIABLE_NAME = '<name>'`, and nothing else.
 */
function showVariablesObjection(tokens: readonly Token[], at: number): Objection | undefined {
  const scoped = isWord(tokens[at], 'GLOBAL', 'SESSION', 'LOCAL') ? at + 1 : at;
  if (!isWord(tokens[scoped], 'VARIABLES')) return undefined;
  const rest = scoped + 1;
  const pattern = tokens[rest + 1];
  if (
    isWord(tokens[rest], 'LIKE') &&
    // A double-quoted pattern is a string here whatever sql_mode says: the grammar takes only a string after SHOW ... LIKE.
    (pattern?.kind === 'string' || pattern?.kind === 'quoted') &&
    !pattern.opaque &&
    !likeMatches(pattern.text, SECRET_VARIABLE) &&
    endsAt(tokens, rest + 2)
  )
    return undefined;
  if (whereOneOtherVariable(tokens, rest)) return undefined;
  return refuseVariable('SHOW VARIABLES without one constant variable name');
}

/**
 * True when the statement is `SELECT <columns> FROM [schema.]<variables table> WHERE
 * VARIABLE_NAME = '<another variable>'` and nothing more: the one form of a variables table read
 * that shows one named variable.
 */
function selectsOneOtherVariable(tokens: readonly Token[]): boolean {
  if (!isWord(tokens[0], 'SELECT')) return false;
  let k = 1;
  while (k < tokens.length && !isWord(tokens[k], 'FROM')) {
    const token = tokens[k] as Token;
    if (!(token.kind === 'word' || token.kind === 'quoted' || isPunct(token, ',') || isPunct(token, '.') || isPunct(token, '*')))
      return false;
    k++;
  }
  k++;
  if (isPunct(tokens[k + 1], '.')) k += 2;
  const table = nameOf(tokens[k]);
  return table !== undefined && VARIABLE_TABLES.has(table) && whereOneOtherVariable(tokens, k + 1);
}

/**
 * The server variable that holds a credential (report_password), named as a word, a quoted name
 * or a string anywhere (`@@report_password`, `@@global.report_password`, `LIKE 'report_password'`,
 * `VARIABLE_NAME = 'report_password'`), and every variable read wholesale: SHOW VARIABLES and the
 * variables tables, unless the statement names one constant variable other than it.
 */
function secretVariableObjection(tokens: readonly Token[], at: number): Objection | undefined {
  for (const token of tokens) {
    if (token.kind !== 'word' && token.kind !== 'quoted' && token.kind !== 'string') continue;
    if (token.text.length > 64) continue;
    if (token.text.replace(/^@@?/, '').trim().toLowerCase() === SECRET_VARIABLE) return refuseVariable(SECRET_VARIABLE);
  }
  if (isWord(tokens[at], 'SHOW')) {
    const refused = showVariablesObjection(tokens, at + 1);
    if (refused) return refused;
  }
  const table = tokens.map(nameOf).find((name) => name !== undefined && VARIABLE_TABLES.has(name));
  if (table !== undefined && !selectsOneOtherVariable(tokens)) return refuseVariable(`${table} without one constant variable name`);
  return undefined;
}

/** The refusal for reading the table `table` (lower case) of the `mysql` schema, or undefined. */
function mysqlTableObjection(table: string): Objection | undefined {
  if (MYSQL_CREDENTIAL_TABLES.includes(table)) return refuse(`mysql.${table}`);
  return MYSQL_LOG_TABLES.includes(table) ? refuseLog(`mysql.${table}`) : undefined;
}

/**
 * MySQL/MariaDB statements that show credentials: SHOW GRANTS, SHOW CREATE USER and SHOW CREATE
 * SERVER (which print `IDENTIFIED BY PASSWORD '*...'` and server passwords), SHOW BINLOG EVENTS and
 * SHOW RELAYLOG EVENTS (statement text as replicated), and any mention of mysql.user,
 * mysql.global_priv, mysql.servers, mysql.password_history, mysql.general_log or mysql.slow_log;
 * on a connection whose default database is `mysql`, those tables unqualified or after a lone dot
 * (`JOIN .user`, the current database's: mysql-names.ts) too. Refused on
 * every connection, whatever the connection's user may read: the promise is that no secret
 * reaches a tool result. Names are compared in lower case, so another spelling only refuses more.
 */
export function mysqlCredentialObjection(tokens: readonly Token[], _allowWrite = false, database?: string): Objection | undefined {
  const at = leadIndex(tokens);
  const variable = secretVariableObjection(tokens, at);
  if (variable) return variable;
  if (isWord(tokens[at], 'SHOW')) {
    if (isWord(tokens[at + 1], 'GRANTS')) return refuse('SHOW GRANTS');
    if (isWord(tokens[at + 1], 'CREATE') && isWord(tokens[at + 2], 'USER', 'SERVER')) return refuse(`SHOW CREATE ${tokens[at + 2]?.text}`);
    if (isWord(tokens[at + 1], 'BINLOG', 'RELAYLOG')) return refuseLog(`SHOW ${tokens[at + 1]?.text} EVENTS`);
    const shows = otherSessionsShow(tokens, at + 1);
    if (shows) return refuseStatementText(shows);
  }
  for (let k = at; k + 1 < tokens.length; k++) {
    // EXPLAIN [FORMAT=...] FOR CONNECTION n (MySQL, MariaDB 10.9+): another connection's plan and constants.
    if (isWord(tokens[k], 'FOR') && isWord(tokens[k + 1], 'CONNECTION')) return refuseStatementText('EXPLAIN ... FOR CONNECTION');
  }
  const inMysql = database?.toLowerCase() === 'mysql';
  const inSchema = STATEMENT_TEXT_IN[database?.toLowerCase() ?? ''] ?? [];
  for (let k = 0; k < tokens.length; k++) {
    const name = nameOf(tokens[k]);
    if (name === undefined) continue;
    // Each schema the name's qualifier may name (`mysql.user`, `mysql . user`), the name followed
    // by anything (`mysql.user.Password`).
    for (const qualifier of qualifiersAt(tokens, k)) {
      const schema = nameOf(qualifier);
      if (schema !== undefined && STATEMENT_TEXT_IN[schema]?.includes(name)) return refuseStatementText(`${schema}.${name}`);
      const refused = schema === 'mysql' ? mysqlTableObjection(name) : undefined;
      if (refused) return refused;
    }
    if (ANYWHERE.includes(name)) return refuse(name);
    if (statementTextName(name)) return refuseStatementText(name);
    // A table of the default database, unqualified or after a lone dot: `FROM user`, `JOIN .user`.
    if (!mayBeUnqualified(tokens, k)) continue;
    if (inSchema.includes(name)) return refuseStatementText(name);
    const refused = inMysql ? mysqlTableObjection(name) : undefined;
    if (refused) return refused;
  }
  return undefined;
}
