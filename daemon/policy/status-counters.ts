import { executorStatisticsObjection } from './executor-statistics.js';
import { mysqlSystemCountersObjection } from './mysql-system-tables.js';
import { isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * MySQL/MariaDB information_schema tables that count the work statements did (read from the
 * server's information_schema.TABLES, MariaDB 10.11 and MySQL 8): status variables
 * (Handler_read_*, Innodb_rows_read, ...), the user statistics plugin's rows read per table,
 * index, user and client, InnoDB's metrics, buffer pool pages and compression counters, the key
 * caches' reads, the thread pool's counters, the optimizer trace (its row estimates) and the
 * query response time histogram. Names distinctive enough to refuse wherever they appear.
 */
const COUNTER_TABLES: ReadonlySet<string> = new Set([
  'session_status',
  'global_status',
  'client_statistics',
  'user_statistics',
  'index_statistics',
  'table_statistics',
  'innodb_metrics',
  'innodb_buffer_page',
  'innodb_buffer_page_lru',
  'innodb_buffer_pool_stats',
  'innodb_cmp',
  'innodb_cmp_reset',
  'innodb_cmpmem',
  'innodb_cmpmem_reset',
  'innodb_cmp_per_index',
  'innodb_cmp_per_index_reset',
  'key_caches',
  'optimizer_trace',
  'thread_pool_groups',
  'thread_pool_queues',
  'thread_pool_stats',
  'thread_pool_waits',
  'query_response_time',
]);

/**
 * SHOW statements (MariaDB's mysql.help_topic) that print the same counters: SHOW [GLOBAL |
 * SESSION | LOCAL] STATUS, SHOW {CLIENT | USER | INDEX | TABLE}_STATISTICS, SHOW
 * QUERY_RESPONSE_TIME and SHOW WSREP_STATUS. SHOW TABLE STATUS (a row estimate per table) and
 * SHOW PROFILE (timing) stay allowed.
 */
const SHOW_COUNTERS = [
  'CLIENT_STATISTICS',
  'USER_STATISTICS',
  'INDEX_STATISTICS',
  'TABLE_STATISTICS',
  'QUERY_RESPONSE_TIME',
  'WSREP_STATUS',
];

/** A name token as the server compares it, lower case; undefined for anything else. */
function nameAt(tokens: readonly Token[], i: number): string | undefined {
  const token = tokens[i];
  return token?.kind === 'word' || token?.kind === 'quoted' ? token.text.toLowerCase() : undefined;
}

/**
 * On a MySQL/MariaDB connection that separates rows (DEFINER views over the context variables):
 * a statement that reads the server's counters of executor work, which count the rows a view's
 * filter later removes, so `Handler_read_next` before and after a `count(*) ... WHERE item = 'x'`
 * answers whether a hidden row holds 'x'; and MariaDB's `LIMIT ROWS EXAMINED`, which stops the
 * scan after n rows examined, hidden ones included. Any system table reviewed as counting the work
 * of every session (mysql-system-tables.data.ts), qualified or on a connection that opens its schema.
 */
export function mysqlStatusCountersRule(tokens: readonly Token[], database?: string): Objection | undefined {
  const at = leadIndex(tokens);
  if (isWord(tokens[at], 'SHOW')) {
    const scope = isWord(tokens[at + 1], 'GLOBAL', 'SESSION', 'LOCAL') ? at + 2 : at + 1;
    if (isWord(tokens[scope], 'STATUS'))
      return executorStatisticsObjection(scope > at + 1 ? `SHOW ${tokens[at + 1]?.text} STATUS` : 'SHOW STATUS');
    if (isWord(tokens[at + 1], ...SHOW_COUNTERS)) return executorStatisticsObjection(`SHOW ${tokens[at + 1]?.text}`);
  }
  for (let k = 0; k < tokens.length; k++) {
    // MariaDB's LIMIT ROWS EXAMINED n: the same counter as a clause. The smallest n that still
    // returns the caller's own row is one more than the hidden rows the scan passed on the way.
    if (isWord(tokens[k], 'ROWS') && isWord(tokens[k + 1], 'EXAMINED')) return executorStatisticsObjection('LIMIT ROWS EXAMINED');
    const name = nameAt(tokens, k);
    if (name === undefined) continue;
    if (COUNTER_TABLES.has(name)) return executorStatisticsObjection(name.toUpperCase());
  }
  // performance_schema and sys count every session's work, but for their settings and helpers.
  return mysqlSystemCountersObjection(tokens, database);
}
