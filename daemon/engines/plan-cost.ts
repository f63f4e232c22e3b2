import type { Engine } from '../../shared/connection-url.js';

/**
 * Leading keywords of reads the engine cannot EXPLAIN: such statements pass the cost guard
 * without an estimate. Every other read is explained, and a read whose EXPLAIN fails is refused
 * with that failure (the guard fails closed).
 */
const NOT_EXPLAINABLE: Record<Engine, ReadonlySet<string>> = {
  postgres: new Set(['SHOW', 'EXPLAIN', 'FETCH']),
  mysql: new Set(['SHOW', 'EXPLAIN', 'DESCRIBE', 'DESC', 'HELP']),
  hana: new Set(['EXPLAIN']),
  sqlite: new Set(),
};

/** The first word of a statement, past white space, comments and opening parentheses; upper-cased. */
export function leadingWord(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (/\s|\(/.test(c)) i++;
    else if (c === '-' && sql[i + 1] === '-') i = lineEnd(sql, i);
    else if (c === '#') i = lineEnd(sql, i);
    else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else break;
  }
  const m = /^[A-Za-z_]+/.exec(sql.slice(i, i + 64));
  return m ? m[0].toUpperCase() : '';
}

function lineEnd(sql: string, i: number): number {
  const end = sql.indexOf('\n', i);
  return end < 0 ? sql.length : end + 1;
}

/** True when the guard explains this read before it runs (see NOT_EXPLAINABLE). */
export function explainable(sql: string, engine: Engine): boolean {
  return !NOT_EXPLAINABLE[engine].has(leadingWord(sql));
}

const finite = (v: unknown): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};

/**
 * The total cost on the first line of PostgreSQL's text `EXPLAIN` (the top plan node:
 * `Limit  (cost=710.47..710.59 rows=50 width=30)`). PostgreSQL prints costs with two decimals,
 * always in the C locale.
 */
export function postgresTopCost(line: string | null): number | undefined {
  const m = line ? /\(cost=\d+(?:\.\d+)?\.\.(\d+(?:\.\d+)?) rows=/.exec(line) : null;
  return m ? finite(m[1]) : undefined;
}

/**
 * MySQL/MariaDB `EXPLAIN FORMAT=JSON` (text or parsed): MySQL's `query_block.cost_info.query_cost`,
 * or MariaDB 11's `query_block.cost`. MariaDB before 11.0 gives neither (undefined).
 */
export function mysqlPlanCost(plan: unknown): number | undefined {
  const parsed = typeof plan === 'string' ? JSON.parse(plan) : plan;
  const block = (parsed as { query_block?: { cost_info?: { query_cost?: unknown }; cost?: unknown } } | null)?.query_block;
  return finite(block?.cost_info?.query_cost) ?? finite(block?.cost);
}

/**
 * Why a connection cannot have a cost limit, or undefined when it can. `serverVersion` is what the
 * server reported (MySQL/MariaDB only need it): MariaDB gives no plan cost before 11.0.
 */
export function costGuardUnavailable(engine: Engine, serverVersion?: string): string | undefined {
  if (engine === 'sqlite')
    return 'SQLite has no cost estimate: EXPLAIN QUERY PLAN gives only the plan’s shape, so --max-cost is not available on SQLite connections.';
  if (engine === 'mysql' && serverVersion && /mariadb/i.test(serverVersion)) {
    const major = Number(/^(\d+)/.exec(serverVersion)?.[1] ?? 0);
    if (major < 11)
      return `MariaDB gives no plan cost before 11.0 (EXPLAIN FORMAT=JSON has no query cost on ${serverVersion.split('-')[0]}), so --max-cost is not available on this server.`;
  }
  return undefined;
}
