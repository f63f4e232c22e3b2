import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { name } from '../../catalog/catalog-sql.js';
import { RESOLVE_MARKER, resolveRefusal, walkFinding } from './postgres-resolve.js';

/**
 * The relation the statement policy refuses (pg_authid, pg_shadow, pg_stats, pg_hba_file_rules,
 * pg_stat_activity, information_schema.user_mapping_options, an extension's pg_stat_statements,
 * hanactl's own key table, ...) that `table` is, or reads through what it uses, found by identity
 * as the resolve step finds it (postgres-reach.ts): views over views, the functions, operators
 * and casts they use and those functions' bodies, inheritance and partition children, and the
 * remote name of a postgres_fdw foreign table. Undefined when it reads none. Throws the resolve
 * step's refusal when what it reaches is a SECURITY DEFINER function created since initdb (a view
 * over one) or a foreign table whose remote end cannot be judged; with `separated`, also what the
 * walk refuses only where rows are separated (the executor's statistics, owner-rights relations).
 */
export async function postgresRefusedRead(run: CatalogExecutor, table: TableRef, separated = false): Promise<string | undefined> {
  if (typeof table.handle !== 'number' || table.handle <= 0) return undefined;
  const quote = (part: string): string => `"${part.replaceAll('"', '""')}"`;
  const step = walkFinding({
    relations: [`${quote(table.schema)}.${quote(table.table)}`],
    functions: [],
    ...(separated ? { separated } : {}),
    // sample_rows only reads: what only a writable connection runs is refused when the relation reaches it.
    readOnly: true,
  });
  const values = (step.values ?? []).map((value) => (typeof value === 'string' ? value : null));
  const [row] = await run(step.text, values, 1);
  const what = row ? name(row, 'what') : undefined;
  if (!what) return undefined;
  if (what.startsWith('R ')) return what.slice(what.lastIndexOf(' reads ') + ' reads '.length);
  throw resolveRefusal(`${RESOLVE_MARKER}${what}`) ?? new Error('The resolve walk found what it cannot name.');
}
