import type { TableDescription } from '../../../shared/catalog-schemas.js';
import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { flag, list, name, text } from '../../catalog/catalog-sql.js';
import { aliasedColumns, describeColumns } from '../../catalog/describe-columns.js';

/** Column names of a key array, in key order, as `text[]`. */
const keyNames = (keys: string, rel: string) =>
  `ARRAY(SELECT a.attname::text FROM unnest(${keys}) WITH ORDINALITY k(attnum, ord)
     JOIN pg_catalog.pg_attribute a ON a.attrelid = ${rel} AND a.attnum = k.attnum ORDER BY k.ord)`;

const COLUMNS_SQL = `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
  pg_get_expr(d.adbin, d.adrelid) AS default_value, col_description(a.attrelid, a.attnum) AS comment
FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`;

const CONSTRAINTS_SQL = `SELECT con.conname AS name, con.contype AS type, ${keyNames('con.conkey', 'con.conrelid')} AS columns,
  rn.nspname AS ref_schema, rc.relname AS ref_table, ${keyNames('con.confkey', 'con.confrelid')} AS ref_columns
FROM pg_catalog.pg_constraint con
  LEFT JOIN pg_catalog.pg_class rc ON rc.oid = con.confrelid
  LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
WHERE con.conrelid = $1 AND con.contype IN ('p', 'f') ORDER BY con.contype, con.conname`;

const INDEXES_SQL = `SELECT i.relname AS name, x.indisunique AS is_unique, x.indisprimary AS is_primary,
  ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(1, x.indnkeyatts) k) AS columns
FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
WHERE x.indrelid = $1 ORDER BY x.indisprimary DESC, i.relname`;

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
