import { finiteNumber } from '../plan-cost.js';

/** Leading keywords of reads PostgreSQL cannot EXPLAIN: the cost guard lets them pass without an estimate. */
export const POSTGRES_NOT_EXPLAINABLE: ReadonlySet<string> = new Set(['SHOW', 'EXPLAIN', 'FETCH']);

/**
 * The total cost on the first line of PostgreSQL's text `EXPLAIN` (the top plan node:
 * `Limit  (cost=710.47..710.59 rows=50 width=30)`). PostgreSQL prints costs with two decimals,
 * always in the C locale.
 */
export function postgresTopCost(line: string | null): number | undefined {
  const m = line ? /\(cost=\d+(?:\.\d+)?\.\.(\d+(?:\.\d+)?) rows=/.exec(line) : null;
  return m ? finiteNumber(m[1]) : undefined;
}
