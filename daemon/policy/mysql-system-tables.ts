import { capQuoted } from '../../shared/linear-text.js';
import { executorStatisticsObjection } from './executor-statistics.js';
import { CURRENT_DATABASE, isDummyDual, qualifiersAt } from './mysql-names.js';
import { SYSTEM_TABLES, type SystemTableReview } from './mysql-system-tables.data.js';
import { objection } from './objections.js';
import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/** A system table a statement names: its schema (lower case), its name as written, its review if any. */
interface SystemTableReference {
  readonly schema: string;
  readonly name: string;
  readonly review: SystemTableReview | undefined;
}

/**
 * Words that follow SHOW in the server's grammar (MariaDB's sql_yacc.yy show_param, MySQL's).
 * Any other word after SHOW is MariaDB's `SHOW <information_schema table>`, which reads that
 * table (SHOW INNODB_CMP_RESET resets what it shows, SHOW METADATA_LOCK_INFO lists other sessions'
 * locks), so it is judged as the table.
 */
const SHOW_GRAMMAR: ReadonlySet<string> = new Set(
  (
    'ALL ANALYZE AUTHORS BINARY BINLOG CHARACTER CHARSET CODE COLLATION COLUMNS CONTRIBUTORS COUNT CREATE DATABASES ' +
    'ENGINE ENGINES ERRORS EVENTS EXPLAIN EXTENDED FIELDS FULL FUNCTION GLOBAL GRANTS INDEX INDEXES INNODB KEYS LOCAL ' +
    'LOGS MASTER MUTEX OPEN PACKAGE PARSE_TREE PLUGINS PRIVILEGES PROCEDURE PROCESSLIST PROFILE PROFILES RELAYLOG REPLICA ' +
    'REPLICAS SCHEMAS SESSION SLAVE SLAVES STATUS STORAGE TABLE TABLES TRIGGERS VARIABLES WARNINGS'
  ).split(' '),
);

/** Words after which, in a FROM list, the next name is a table. */
const TABLE_INTRODUCERS = ['FROM', 'JOIN', 'STRAIGHT_JOIN', 'TABLE', 'UPDATE', 'INTO'];
/** Words that end a FROM list at their depth. */
const FROM_LIST_ENDS = [
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'WINDOW',
  'SELECT',
  'FOR',
  'LOCK',
  'PROCEDURE',
  'RETURNING',
  'SET',
  'VALUES',
];

/** A name token as written; undefined for anything else. */
const nameText = (token: Token | undefined): string | undefined =>
  token?.kind === 'word' || token?.kind === 'quoted' ? token.text : undefined;

/** Whether the name at `k` may be a table of the current database (`t`, `.t`), not a qualifier itself. */
const inCurrent = (tokens: readonly Token[], k: number): boolean =>
  qualifiersAt(tokens, k).includes(CURRENT_DATABASE) && !isPunct(tokens[k + 1], '.');

const reference = (schema: string, name: string): SystemTableReference => ({
  schema,
  name,
  review: SYSTEM_TABLES[schema]?.get(name.toLowerCase()),
});

/**
 * The system tables a MySQL/MariaDB statement names: `schema.name` for each system schema (any
 * quoting or case); `SHOW <word>` where the word is no SHOW form of the grammar (an
 * information_schema table); and on a connection whose default database is a system schema, each
 * unqualified name (or one after a lone dot, `JOIN .t`: mysql-names.ts) that a FROM list, JOIN,
 * TABLE, UPDATE or INTO introduces, at any depth.
 */
export function systemTableReferences(tokens: readonly Token[], database?: string): SystemTableReference[] {
  const found: SystemTableReference[] = [];
  const at = leadIndex(tokens);
  if (isWord(tokens[at], 'SHOW')) {
    const word = nameText(tokens[at + 1]);
    if (word !== undefined && !SHOW_GRAMMAR.has(word.toUpperCase())) found.push(reference('information_schema', word));
  }
  for (let k = 0; k < tokens.length; k++) {
    const name = nameText(tokens[k]);
    if (name === undefined) continue;
    for (const qualifier of qualifiersAt(tokens, k)) {
      const schema = nameText(qualifier)?.toLowerCase();
      if (schema !== undefined && schema in SYSTEM_TABLES) found.push(reference(schema, name));
    }
  }
  const opened = database?.toLowerCase() ?? '';
  if (!(opened in SYSTEM_TABLES)) return found;
  // Unqualified names: a FROM list per parenthesis depth, so `FROM (SELECT 1) d, t` still sees t,
  // and a parenthesised table list goes on being one.
  const inList: boolean[] = [false];
  let expectTable = false;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    if (isPunct(token, '(')) {
      // `FROM (t)`, `JOIN (a, b)`: a table list in parentheses goes on naming tables.
      inList.push(expectTable);
    } else if (isPunct(token, ')')) {
      if (inList.length > 1) inList.pop();
      expectTable = false;
    } else if (isWord(token, ...TABLE_INTRODUCERS)) {
      inList[inList.length - 1] = true;
      expectTable = true;
    } else if (isPunct(token, ',') && inList[inList.length - 1]) {
      expectTable = true;
    } else if (isWord(token, ...FROM_LIST_ENDS)) {
      inList[inList.length - 1] = false;
      expectTable = false;
    } else if (expectTable && isPunct(token, '.')) {
      // `FROM .t`, `JOIN . t`: the current database's t (mysql-names.ts); `db.t` is read above.
    } else if (expectTable) {
      expectTable = false;
      const name = nameText(token);
      if (name !== undefined && inCurrent(tokens, k) && !isDummyDual(tokens, k) && !isWord(token, 'LATERAL'))
        found.push(reference(opened, name));
    }
  }
  return found;
}

const written = (ref: SystemTableReference): string => capQuoted(`${ref.schema}.${ref.name}`, 120);

/**
 * On every MySQL/MariaDB connection: a system table nobody reviewed (a plugin's or a newer
 * server's, until it is classified in mysql-system-tables.data.ts), and one whose read changes
 * server state or shows other sessions' statements, values or credentials.
 */
export function mysqlSystemTableObjection(tokens: readonly Token[], database?: string): Objection | undefined {
  for (const ref of systemTableReferences(tokens, database)) {
    if (ref.review === undefined)
      return objection(
        'system-table',
        `Refused: ${written(ref)} is a table of the server's ${ref.schema} schema that hanactl has not reviewed (a plugin or a newer server may have added it, and some such tables change server state or show other sessions' work when read), so hanactl refuses it on every connection.`,
        'Use the reviewed catalog tables (information_schema.TABLES, COLUMNS, ROUTINES, ...) instead, or ask a person to read it in a database client.',
      );
    if (ref.review.use === 'nowhere')
      return objection(
        'system-table',
        `Refused: ${written(ref)}: ${ref.review.why}; hanactl does not read it on any connection.`,
        'Ask a person to read it in a database client.',
      );
  }
  return undefined;
}

/** Where rows are separated: a reviewed system table that counts the work of every session. */
export function mysqlSystemCountersObjection(tokens: readonly Token[], database?: string): Objection | undefined {
  const counting = systemTableReferences(tokens, database).find((ref) => ref.review?.use !== 'everywhere');
  return counting ? executorStatisticsObjection(written(counting)) : undefined;
}
