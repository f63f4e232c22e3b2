import { executorStatisticsObjection } from './executor-statistics.js';
import { COUNTER_NAMES } from './mysql-system-tables.data.js';
import { mysqlSystemCountersObjection } from './mysql-system-tables.js';
import { isWord, leadIndex } from './tokens.js';
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
 * TABLE STATUS (a row estimate per table) and SHOW PROFILE (timing) stay allowed; MariaDB's
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
  return mysqlSystemCountersObjection(tokens, database);
}
