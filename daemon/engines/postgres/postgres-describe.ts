import type { TableDescription } from '../../../shared/catalog-schemas.js';
import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { flag, list, name, text } from '../../catalog/catalog-sql.js';
import { aliasedColumns, describeColumns } from '../../catalog/describe-columns.js';

/*
 * Every function, operator and type is named by pg_catalog: the login's search_path may name a
 * schema before pg_catalog, whose objects of the same name would otherwise be the ones called.
 */

/** Column names of a key array, in key order, as `text[]`. */
const keyNames = (keys: string, rel: string) =>
  `ARRAY(SELECT a.attname::pg_catalog.text FROM pg_catalog.unnest(${keys}) WITH ORDINALITY k(attnum, ord)
     JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) ${rel} AND a.attnum OPERATOR(pg_catalog.=) k.attnum ORDER BY k.ord)`;

/** The comment on a relation (`objsubid` 0) or one of its columns, read from pg_description as col_description does. */
export const describedAs = (objoid: string, objsubid: string): string =>
  `(SELECT ds.description FROM pg_catalog.pg_description ds WHERE ds.objoid OPERATOR(pg_catalog.=) ${objoid}
     AND ds.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass AND ds.objsubid OPERATOR(pg_catalog.=) ${objsubid})`;

const COLUMNS_SQL = `SELECT a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
  pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default_value, ${describedAs('a.attrelid', 'a.attnum')} AS comment
FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
WHERE a.attrelid OPERATOR(pg_catalog.=) $1 AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped ORDER BY a.attnum`;

const CONSTRAINTS_SQL = `SELECT con.conname AS name, con.contype AS type, ${keyNames('con.conkey', 'con.conrelid')} AS columns,
  rn.nspname AS ref_schema, rc.relname AS ref_table, ${keyNames('con.confkey', 'con.confrelid')} AS ref_columns
FROM pg_catalog.pg_constraint con
  LEFT JOIN pg_catalog.pg_class rc ON rc.oid OPERATOR(pg_catalog.=) con.confrelid
  LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid OPERATOR(pg_catalog.=) rc.relnamespace
WHERE con.conrelid OPERATOR(pg_catalog.=) $1 AND con.contype OPERATOR(pg_catalog.=) ANY ('{p,f}'::pg_catalog."char"[]) ORDER BY con.contype, con.conname`;

const INDEXES_SQL = `SELECT i.relname AS name, x.indisunique AS is_unique, x.indisprimary AS is_primary,
  ARRAY(SELECT pg_catalog.pg_get_indexdef(x.indexrelid, k, true) FROM pg_catalog.generate_series(1, x.indnkeyatts) k) AS columns
FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid OPERATOR(pg_catalog.=) x.indexrelid
WHERE x.indrelid OPERATOR(pg_catalog.=) $1 ORDER BY x.indisprimary DESC, i.relname`;

/** Columns, primary key, foreign keys and indexes of a relation proven by `findTables` (by oid). */
export async function describePostgresTable(run: CatalogExecutor, table: TableRef): Promise<TableDescription> {
  const oid = table.handle ?? 0;
  const columns = await run(COLUMNS_SQL, [oid], 5000);
  const constraints = await run(CONSTRAINTS_SQL, [oid], 1000);
  const indexes = await run(INDEXES_SQL, [oid], 1000);
  const primary = constraints.find((c) => text(c, 'type') === 'p');
  return {
    schema: table.schema,
    table: table.table,
    kind: table.kind,
    comment: table.comment,
    columns: describeColumns(columns, aliasedColumns()),
    primaryKey: primary ? list(primary, 'columns') : [],
    foreignKeys: constraints
      .filter((c) => text(c, 'type') === 'f')
      .map((c) => ({
        name: name(c, 'name'),
        columns: list(c, 'columns'),
        refSchema: name(c, 'ref_schema'),
        refTable: name(c, 'ref_table'),
        refColumns: list(c, 'ref_columns'),
      })),
    indexes: indexes.map((i) => ({
      name: name(i, 'name'),
      columns: list(i, 'columns'),
      unique: flag(i, 'is_unique'),
      primary: flag(i, 'is_primary'),
    })),
  };
}
