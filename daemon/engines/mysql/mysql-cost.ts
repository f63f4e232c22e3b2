import { finiteNumber } from '../plan-cost.js';

/** Leading keywords of reads MySQL/MariaDB cannot EXPLAIN: the cost guard lets them pass without an estimate. */
export const MYSQL_NOT_EXPLAINABLE: ReadonlySet<string> = new Set(['SHOW', 'EXPLAIN', 'DESCRIBE', 'DESC', 'HELP']);

/**
 * MySQL/MariaDB `EXPLAIN FORMAT=JSON` (text or parsed): MySQL's `query_block.cost_info.query_cost`,
 * or MariaDB 11's `query_block.cost`. MariaDB before 11.0 gives neither (undefined).
 */
export function mysqlPlanCost(plan: unknown): number | undefined {
  const parsed = typeof plan === 'string' ? JSON.parse(plan) : plan;
  const block = (parsed as { query_block?: { cost_info?: { query_cost?: unknown }; cost?: unknown } } | null)?.query_block;
  return finiteNumber(block?.cost_info?.query_cost) ?? finiteNumber(block?.cost);
}

/** Why this server keeps no cost limit, from the version it reported: MariaDB gives no plan cost before 11.0. */
export function mysqlCostLimitUnavailable(serverVersion?: string): string | undefined {
  if (!serverVersion || !/mariadb/i.test(serverVersion)) return undefined;
  const major = Number(/^(\d+)/.exec(serverVersion)?.[1] ?? 0);
  if (major >= 11) return undefined;
  return `MariaDB gives no plan cost before 11.0 (EXPLAIN FORMAT=JSON has no query cost on ${serverVersion.split('-')[0]}), so --max-cost is not available on this server.`;
}
