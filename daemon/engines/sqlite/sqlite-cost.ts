/** Why a SQLite connection keeps no cost limit: there is no estimate to hold it to. */
export const sqliteCostLimitUnavailable = (): string =>
  'SQLite has no cost estimate: EXPLAIN QUERY PLAN gives only the plan’s shape, so --max-cost is not available on SQLite connections.';
