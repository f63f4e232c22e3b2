import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { name } from '../../catalog/catalog-sql.js';
import { PG_REFUSED_RELATION_NAMES } from '../../policy/pg-functions.js';

/** How many views deep the search follows views over views. */
const MAX_VIEW_DEPTH = 16;

/**
 * The server's relation the statement policy refuses (pg_authid, pg_shadow, pg_stats,
 * pg_hba_file_rules, pg_stat_activity, information_schema.user_mapping_options, an extension's
 * pg_stat_statements, ...) that `table` is, or reads through its views, found by identity: the
 * relation's OID and, for a view, the OIDs its rewrite rules read (`:relid` in the stored query
 * tree), views over views included. Undefined when it reads none. Functions a view calls are not
 * followed; result masking is the layer behind that. A view's rules name the view itself (OLD
 * and NEW before PostgreSQL 16); that name is not followed again.
 */
export async function postgresRefusedRead(run: CatalogExecutor, table: TableRef): Promise<string | undefined> {
  if (typeof table.handle !== 'number' || table.handle <= 0) return undefined;
  const names = PG_REFUSED_RELATION_NAMES.map((n) => `'${n}'`).join(', ');
  const [row] = await run(
    `WITH RECURSIVE refused AS (
       SELECT c.oid, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname IN (${names})
          AND (n.nspname IN ('pg_catalog', 'information_schema')
               OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                           WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'))
     ), reach(oid, depth) AS (
       SELECT $1::bigint::oid, 0
       UNION
       SELECT m[1]::oid, r.depth + 1
         FROM reach r JOIN pg_catalog.pg_rewrite w ON w.ev_class = r.oid
        CROSS JOIN LATERAL regexp_matches(w.ev_action::text, ':relid (\\d+)', 'g') AS m
        WHERE r.depth < ${MAX_VIEW_DEPTH} AND m[1]::oid <> r.oid
     )
     SELECT f.relname AS name FROM reach JOIN refused f ON f.oid = reach.oid LIMIT 1`,
    [table.handle],
    1,
  );
  return row ? name(row, 'name') : undefined;
}
