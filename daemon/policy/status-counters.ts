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
 * PROFILE (timing) stays allowed (SHOW TABLE STATUS: autoIncrementObjection); MariaDB's
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
  return mysqlSystemCountersObjection(tokens, database) ?? autoIncrementObjection(tokens, database);
}

/** The refusal for reading a table's AUTO_INCREMENT counter through `what` where rows are separated. */
function autoIncrementRefusal(what: string): Objection {
  return objection(
    'executor-statistics',
    `Refused: ${what} shows a table's next AUTO_INCREMENT value, which moves with every caller's inserts, and on this connection it counts the rows that context values hide from you.`,
    "Count the rows you can see with SELECT count(*) instead; describe_table shows a table's columns, and a person can read the counter in a database client.",
  );
}

/**
 * Where rows are separated on MySQL/MariaDB: a table's AUTO_INCREMENT counter, the next key its
 * inserts take, counts every caller's inserts into it, as a sequence's position does (a sequence
 * read as a relation: mysql-routines.ts sequenceRefusal). Refused: SHOW TABLE STATUS and SHOW
 * CREATE TABLE (`AUTO_INCREMENT=n` among its options), and a statement (or a body or view's text)
 * that reads information_schema.TABLES and names an AUTO_INCREMENT column or selects `*` (coarse:
 * the column is not told from another table's of that name, nor `t.*` from `*` of another table;
 * `count(*)` is no such read). LAST_INSERT_ID() reports the session's own insert, and answers.
 */
function autoIncrementObjection(tokens: readonly Token[], database?: string): Objection | undefined {
  const at = leadIndex(tokens);
  if (isWord(tokens[at], 'SHOW')) {
    if (isWord(tokens[at + 1], 'TABLE') && isWord(tokens[at + 2], 'STATUS')) return autoIncrementRefusal('SHOW TABLE STATUS');
    if (isWord(tokens[at + 1], 'CREATE') && isWord(tokens[at + 2], 'TABLE')) return autoIncrementRefusal('SHOW CREATE TABLE');
  }
  const tables = systemTableReferences(tokens, database).some(
    (ref) => ref.schema === 'information_schema' && ref.name.toLowerCase() === 'tables',
  );
  if (!tables) return undefined;
  for (let k = 0; k < tokens.length; k++) {
    if (nameAt(tokens, k) === 'auto_increment') return autoIncrementRefusal('information_schema.TABLES.AUTO_INCREMENT');
    if (isPunct(tokens[k], '*') && !(isPunct(tokens[k - 1], '(') && isPunct(tokens[k + 1], ')')))
      return autoIncrementRefusal('* of information_schema.TABLES (its AUTO_INCREMENT column)');
  }
  return undefined;
}
