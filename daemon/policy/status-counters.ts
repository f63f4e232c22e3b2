import { executorStatisticsObjection } from './executor-statistics.js';
import { COUNTER_NAMES } from './mysql-system-tables.data.js';
import { mysqlSystemCountersObjection, systemTableReferences } from './mysql-system-tables.js';
import { objection } from './objections.js';
import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/** A name token as the server compares it, lower case; undefined for anything else. */
function nameAt(tokens: readonly Token[], i: number): string | undefined {
  const token = tokens[i];
  return token?.kind === 'word' || token?.kind === 'quoted' ? token.text.toLowerCase() : undefined;
}

/**
 * On a MySQL/MariaDB connection that separates rows (DEFINER views over the context variables):
 * a statement that reads the server's counters of executor work, which count the rows a view's
 * filter later removes, so `Handler_read_next` before and after a `count(*) ... WHERE item = 'x'`
 * answers whether a hidden row holds 'x'. Refused: SHOW [GLOBAL | SESSION | LOCAL] STATUS and
 * MariaDB's SHOW of a counter table (SHOW CLIENT_STATISTICS, SHOW WSREP_STATUS, ...), while SHOW
 * PROFILE (timing) stays allowed (SHOW TABLE STATUS: tableFiguresObjection); MariaDB's
 * `LIMIT ROWS EXAMINED`, which stops the scan after n rows examined, hidden ones included; the
 * counter tables of mysql-system-tables.data.ts marked `anywhere`, wherever the name appears (a
 * bare word, any schema); and any other system table reviewed there as counting the work of every
 * session, qualified or on a connection that opens its schema.
 */
export function mysqlStatusCountersRule(tokens: readonly Token[], database?: string): Objection | undefined {
  const at = leadIndex(tokens);
  if (isWord(tokens[at], 'SHOW')) {
    const scope = isWord(tokens[at + 1], 'GLOBAL', 'SESSION', 'LOCAL') ? at + 2 : at + 1;
    if (isWord(tokens[scope], 'STATUS'))
      return executorStatisticsObjection(scope > at + 1 ? `SHOW ${tokens[at + 1]?.text} STATUS` : 'SHOW STATUS');
    // MariaDB's SHOW <information_schema table>: SHOW CLIENT_STATISTICS, SHOW QUERY_RESPONSE_TIME, ...
    const shown = nameAt(tokens, at + 1);
    if (shown !== undefined && COUNTER_NAMES.has(shown)) return executorStatisticsObjection(`SHOW ${tokens[at + 1]?.text}`);
  }
  for (let k = 0; k < tokens.length; k++) {
    // MariaDB's LIMIT ROWS EXAMINED n: the same counter as a clause. The smallest n that still
    // returns the caller's own row is one more than the hidden rows the scan passed on the way.
    if (isWord(tokens[k], 'ROWS') && isWord(tokens[k + 1], 'EXAMINED')) return executorStatisticsObjection('LIMIT ROWS EXAMINED');
    const name = nameAt(tokens, k);
    if (name === undefined) continue;
    if (COUNTER_NAMES.has(name)) return executorStatisticsObjection(name.toUpperCase());
  }
  // performance_schema and sys count every session's work, but for their settings and helpers.
  return mysqlSystemCountersObjection(tokens, database) ?? tableFiguresObjection(tokens, database);
}

/** The refusal for reading, through `what`, a figure that moves with every caller's writes, where rows are separated. */
function figuresRefusal(what: string): Objection {
  return objection(
    'executor-statistics',
    `Refused: ${what} moves with every caller's writes (a count of rows, a size in bytes, the time of the last write, a position in the server's log), and on this connection it tells about the rows that context values hide from you: their number, their length, when they were written.`,
    'Count the rows you can see with SELECT count(*) instead; describe_table shows a table\'s columns, and a person can read these figures in a database client.',
  );
}

/**
 * The figures information_schema's TABLES, PARTITIONS and STATISTICS keep of a table or a
 * partition (MariaDB 10.11's columns): its rows, their average length, its data and index sizes,
 * its free space, when it was written and checked, its checksum, an index's cardinality. Each moves
 * with every caller's writes; a partition per customer gives that customer's own count.
 */
const TABLE_FIGURES: ReadonlySet<string> = new Set([
  'table_rows',
  'avg_row_length',
  'data_length',
  'max_data_length',
  'index_length',
  'data_free',
  'update_time',
  'check_time',
  'checksum',
  'cardinality',
]);

/** information_schema tables that keep such figures, read where rows are separated only for their other columns. */
const FIGURE_TABLES: ReadonlySet<string> = new Set(['tables', 'partitions', 'statistics']);

/** information_schema tables of the server's variables: a text filter on them cannot be judged, and the log positions are among them. */
const VARIABLE_TABLES: ReadonlySet<string> = new Set(['global_variables', 'session_variables', 'system_variables']);

/** A column of AUTO_INCREMENT's name. */
const AUTO_INCREMENT: ReadonlySet<string> = new Set(['auto_increment']);

/**
 * The first of `columns` the statement names, or `*` for a star that is not `count(*)`'s, else
 * undefined (coarse: a column is not told from another table's of that name, nor `t.*` from `*`
 * of another table).
 */
function columnRead(tokens: readonly Token[], columns: ReadonlySet<string>): string | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const name = nameAt(tokens, k);
    if (name !== undefined && columns.has(name)) return name;
    if (isPunct(tokens[k], '*') && !(isPunct(tokens[k - 1], '(') && isPunct(tokens[k + 1], ')'))) return '*';
  }
  return undefined;
}

/**
 * Where rows are separated on MySQL/MariaDB: figures that move with every caller's writes.
 * Refused:
 * - a table's AUTO_INCREMENT counter, the next key its inserts take, which counts every caller's
 *   inserts into it as a sequence's position does (a sequence read as a relation: mysql-routines.ts
 *   sequenceRefusal): SHOW TABLE STATUS, SHOW CREATE TABLE (`AUTO_INCREMENT=n` among its options),
 *   and a read of information_schema.TABLES that names an AUTO_INCREMENT column or selects `*`.
 *   LAST_INSERT_ID() reports the session's own insert, and answers;
 * - a figure column of information_schema.TABLES, PARTITIONS or STATISTICS (TABLE_FIGURES), or `*`
 *   of one; InnoDB's per-table counters (INNODB_SYS_TABLESTATS, MySQL's INNODB_TABLESTATS: rows and
 *   a count of changes) wherever the name appears; SHOW INDEX (its Cardinality);
 * - the binary log's positions, which step with every caller's committed write and, event by
 *   event, give each one's size: a `gtid_` variable (`@@gtid_binlog_pos`, `@@gtid_current_pos`,
 *   `@@gtid_binlog_state`, ...), BINLOG_GTID_POS(), SHOW MASTER STATUS and SHOW BINLOG STATUS,
 *   SHOW BINARY LOGS (sizes), and every variable at once (SHOW VARIABLES, the *_VARIABLES tables),
 *   whose text filters cannot be judged (`@@name` of another variable still answers);
 * - UUID_SHORT(), a server-wide counter of its calls, where an application uses it for keys.
 * The AUTO_INCREMENT forms are judged first, so that they keep their own message.
 */
function tableFiguresObjection(tokens: readonly Token[], database?: string): Objection | undefined {
  const at = leadIndex(tokens);
  const show = isWord(tokens[at], 'SHOW');
  if (show && isWord(tokens[at + 1], 'TABLE') && isWord(tokens[at + 2], 'STATUS')) return autoIncrementRefusal('SHOW TABLE STATUS');
  if (show && isWord(tokens[at + 1], 'CREATE') && isWord(tokens[at + 2], 'TABLE')) return autoIncrementRefusal('SHOW CREATE TABLE');
  const read = systemTableReferences(tokens, database)
    .filter((ref) => ref.schema === 'information_schema')
    .map((ref) => ref.name.toLowerCase());
  if (read.includes('tables')) {
    const counter = columnRead(tokens, AUTO_INCREMENT);
    if (counter === '*') return autoIncrementRefusal('* of information_schema.TABLES (its AUTO_INCREMENT column)');
    if (counter !== undefined) return autoIncrementRefusal('information_schema.TABLES.AUTO_INCREMENT');
  }
  if (show) {
    const next = at + (isWord(tokens[at + 1], 'GLOBAL', 'SESSION', 'LOCAL') ? 2 : 1);
    if (isWord(tokens[next], 'VARIABLES')) return figuresRefusal('SHOW VARIABLES (the binary log positions among them)');
    if (isWord(tokens[at + 1], 'INDEX', 'INDEXES', 'KEYS')) return figuresRefusal("SHOW INDEX (each index's cardinality)");
    if (isWord(tokens[at + 1], 'MASTER', 'BINLOG') && isWord(tokens[at + 2], 'STATUS'))
      return figuresRefusal(`SHOW ${tokens[at + 1]?.text} STATUS (the binary log position)`);
    if (isWord(tokens[at + 1], 'BINARY', 'MASTER') && isWord(tokens[at + 2], 'LOGS')) return figuresRefusal("SHOW BINARY LOGS (the logs' sizes)");
  }
  for (let k = 0; k < tokens.length; k++) {
    const name = nameAt(tokens, k);
    if (name === undefined) continue;
    if (name.startsWith('gtid_')) return figuresRefusal(`${name.toUpperCase()} (a position in the binary log)`);
    if (name === 'binlog_gtid_pos') return figuresRefusal('BINLOG_GTID_POS() (positions in the binary log)');
    if (name === 'uuid_short') return figuresRefusal("UUID_SHORT() (a counter of every caller's calls)");
    if (name === 'innodb_sys_tablestats' || name === 'innodb_tablestats') return figuresRefusal(`${name.toUpperCase()} (rows and changes per table)`);
  }
  const variables = read.find((name) => VARIABLE_TABLES.has(name));
  if (variables) return figuresRefusal(`information_schema.${variables.toUpperCase()} (the binary log positions among them)`);
  const figures = read.find((name) => FIGURE_TABLES.has(name));
  if (!figures) return undefined;
  const column = columnRead(tokens, TABLE_FIGURES);
  if (column === '*') return figuresRefusal(`* of information_schema.${figures.toUpperCase()} (its figure columns)`);
  return column === undefined ? undefined : figuresRefusal(`information_schema.${figures.toUpperCase()}.${column.toUpperCase()}`);
}

/** The refusal for reading a table's AUTO_INCREMENT counter through `what` where rows are separated. */
function autoIncrementRefusal(what: string): Objection {
  return objection(
    'executor-statistics',
    `Refused: ${what} shows a table's next AUTO_INCREMENT value, which moves with every caller's inserts, and on this connection it counts the rows that context values hide from you.`,
    "Count the rows you can see with SELECT count(*) instead; describe_table shows a table's columns, and a person can read the counter in a database client.",
  );
}
