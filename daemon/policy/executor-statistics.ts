import { attributeCallObjection, nameAfterDot } from './attribute-calls.js';
import { objection } from './objections.js';
import { PG_EXECUTOR_STATISTICS, PG_EXECUTOR_STATISTICS_VIEWS } from './pg-functions.generated.js';
import { callName } from './tokens.js';
import type { Objection, Token } from './types.js';

export const EXECUTOR_STATISTICS_HINT =
  'Count the rows you can see with SELECT count(*) instead; a person can read the server statistics in a database client.';

/** The refusal for reading executor statistics through `what` on a connection that separates rows. */
export function executorStatisticsObjection(what: string): Objection {
  return objection(
    'executor-statistics',
    `Refused: ${what} reports the executor's statistics or counters (rows, index entries and blocks read, calls, a sequence's last value, the database's size, WAL positions, transaction ids), and on this connection they count the rows that context values hide from you, so comparing them before and after a query can reveal another caller's values.`,
    EXECUTOR_STATISTICS_HINT,
  );
}

const FUNCTIONS: ReadonlySet<string> = new Set(PG_EXECUTOR_STATISTICS);
const VIEWS: ReadonlyMap<string, string> = new Map(Object.entries(PG_EXECUTOR_STATISTICS_VIEWS));

/** PostgreSQL's NAMEDATALEN - 1: a longer word is cut by the server, and never one of these names. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * The refusal for calling the PostgreSQL function `name` (unqualified, as PostgreSQL folds it)
 * where rows are separated, or undefined: the cumulative statistics functions and the functions
 * of the extensions that count executor work or read storage below row-level security, as
 * classified from pg_proc (scripts/policy/pg-functions.mjs). A quoted name in another case only
 * refuses more.
 */
export function pgStatisticsFunctionObjection(name: string): Objection | undefined {
  return FUNCTIONS.has(name.toLowerCase()) ? executorStatisticsObjection(`${name}()`) : undefined;
}

/**
 * The refusal for reading the PostgreSQL relation `name` (its last part, as written, quotes
 * folded) where rows are separated, or undefined: the views whose stored rules call such a
 * function, directly or through other views (pg_stat_*_tables, pg_statio_*, pg_stat_database, ...).
 */
export function pgStatisticsRelationObjection(name: string): Objection | undefined {
  if (name.length > MAX_IDENTIFIER_BYTES) return undefined;
  const through = VIEWS.get(name.toLowerCase());
  return through ? executorStatisticsObjection(`${name} (through ${through}())`) : undefined;
}

/**
 * The token rules' side on PostgreSQL: each call by its name, and each word or quoted name that is
 * such a view, wherever it appears (a column of that name is refused too: only refuses more).
 */
export function postgresStatisticsRule(tokens: readonly Token[]): Objection | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    if (name !== undefined) {
      const refused = pgStatisticsFunctionObjection(name);
      if (refused) return refused;
      continue;
    }
    const token = tokens[k] as Token;
    const attribute = nameAfterDot(tokens, k);
    if (attribute && !attribute.opaque) {
      // (x).pg_stat_get_xact_tuples_returned is the call pg_stat_get_xact_tuples_returned(x).
      const refused = attributeCallObjection(attribute.text, pgStatisticsFunctionObjection(attribute.text));
      if (refused) return refused;
    }
    if (token.kind === 'word' || token.kind === 'quoted') {
      const refused = pgStatisticsRelationObjection(token.text);
      if (refused) return refused;
    }
  }
  return undefined;
}

/**
 * Where a statement gets a transaction id (type xid or xid8) from: the system columns every row
 * has, the catalogs' frozen and minimum ids, and a cast or conversion to the type. age(xid) is the
 * server's next transaction id minus its argument, so it counts every session's writing
 * transactions, as mxid_age (in the generated list) counts multixacts; age(timestamp) shares its
 * name, so a call of age is judged with these words rather than by its name alone.
 */
export const TRANSACTION_ID_SOURCES: ReadonlySet<string> = new Set([
  'xmin',
  'xmax',
  'datfrozenxid',
  'datminmxid',
  'relfrozenxid',
  'relminmxid',
  'catalog_xmin',
  'backend_xid',
  'backend_xmin',
  'xid',
  'xid8',
]);

/**
 * Where rows are separated on PostgreSQL: the refusal for a statement that calls age() (`calls`
 * holds it) and names a transaction id source (`names`: columns, fields, types and calls, as
 * folded), or undefined. Coarse: age(created_at) next to a column named xmin is refused too.
 */
export function transactionAgeObjection(calls: Iterable<string>, names: Iterable<string>): Objection | undefined {
  if (![...calls].some((name) => name.toLowerCase() === 'age')) return undefined;
  for (const name of names) {
    const folded = name.toLowerCase();
    if (TRANSACTION_ID_SOURCES.has(folded)) return executorStatisticsObjection(`age() of a transaction id (${folded})`);
  }
  return undefined;
}

/** The token rules' side: a call of age anywhere, and a word or quoted name among the sources anywhere. */
export function postgresTransactionAgeRule(tokens: readonly Token[]): Objection | undefined {
  const calls: string[] = [];
  const names: string[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    if (name !== undefined) calls.push(name);
    const token = tokens[k] as Token;
    if ((token.kind === 'word' || token.kind === 'quoted') && token.text.length <= MAX_IDENTIFIER_BYTES) names.push(token.text);
  }
  return transactionAgeObjection(calls, names);
}
