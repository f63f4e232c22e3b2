import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { name } from '../../catalog/catalog-sql.js';
import { REACH_CTE, reachFinding, reachValues } from './postgres-reach.js';

/**
 * The relation the statement policy refuses (pg_authid, pg_shadow, pg_stats, pg_hba_file_rules,
 * pg_stat_activity, information_schema.user_mapping_options, an extension's pg_stat_statements,
 * hanactl's own key table, ...) that `table` is, or reads through what it uses, found by identity
 * as the resolve step finds it (postgres-reach.ts): views over views, the functions, operators
 * and casts they use and those functions' bodies, inheritance and partition children, and the
 * remote name of a postgres_fdw foreign table. Undefined when it reads none. A SECURITY DEFINER
 * function a view calls is not judged here; result masking is the layer behind that.
 */
export async function postgresRefusedRead(run: CatalogExecutor, table: TableRef): Promise<string | undefined> {
  if (typeof table.handle !== 'number' || table.handle <= 0) return undefined;
  const quote = (part: string): string => `"${part.replaceAll('"', '""')}"`;
  const [row] = await run(
    `WITH RECURSIVE ${REACH_CTE}
     SELECT pg_catalog.substr(what, pg_catalog.strpos(what, ' reads ') + 7) AS name
       FROM (SELECT ${reachFinding('true')} AS what OFFSET 0) AS found
      WHERE what LIKE 'R %'`,
    reachValues({ relations: [`${quote(table.schema)}.${quote(table.table)}`], functions: [] }),
    1,
  );
  return row ? name(row, 'name') : undefined;
}
