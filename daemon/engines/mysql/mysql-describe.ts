import type { TableDescription } from '../../../shared/catalog-schemas.js';
import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { type Binder, binder, flag, groupBy, name, text } from '../../catalog/catalog-sql.js';
import { aliasedColumns, describeColumns } from '../../catalog/describe-columns.js';

/**
 * `column = value` compared byte for byte. information_schema compares names without regard
 * to case on MariaDB (`utf8mb3_general_ci`), while tables `t` and `T` may both exist; the plain
 * `=` keeps the server's name lookup fast, the binary one makes it exact.
 */
export function sameName(b: Binder, column: string, value: string): string {
  return `(${column} = ${b.bind(value)} AND CAST(${column} AS BINARY) = CAST(${b.bind(value)} AS BINARY))`;
}

/** `WHERE` for one exact table of an information_schema view, with its parameters. */
function where(table: TableRef) {
  const b = binder('question');
  return { sql: `${sameName(b, 'TABLE_SCHEMA', table.schema)} AND ${sameName(b, 'TABLE_NAME', table.table)}`, params: b.params };
}

/** MariaDB's column rules: no comment is an empty one. */
const MYSQL_COLUMNS = aliasedColumns({
  // MariaDB spells a NULL default as the word NULL (a string default comes quoted: 'NULL').
  defaultValue: (printed) => (printed === 'NULL' ? null : printed),
  comment: (read) => read || null,
});

/**
 * Columns, keys and indexes of a proven table from information_schema. Defaults are passed on
 * as the server prints them (MariaDB quotes a string default: `'x'`).
 */
export async function describeMysqlTable(run: CatalogExecutor, table: TableRef): Promise<TableDescription> {
  const w = where(table);
  const columns = await run(
    `SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS default_value, COLUMN_COMMENT AS comment
       FROM information_schema.COLUMNS WHERE ${w.sql} ORDER BY ORDINAL_POSITION`,
    w.params,
    5000,
  );
  const keys = await run(
    `SELECT CONSTRAINT_NAME AS name, COLUMN_NAME AS column_name, REFERENCED_TABLE_SCHEMA AS ref_schema,
         REFERENCED_TABLE_NAME AS ref_table, REFERENCED_COLUMN_NAME AS ref_column
       FROM information_schema.KEY_COLUMN_USAGE
       WHERE ${w.sql} AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL)
       ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION`,
    w.params,
    1000,
  );
  const indexes = await run(
    `SELECT INDEX_NAME AS name, NON_UNIQUE AS non_unique, COLUMN_NAME AS column_name
       FROM information_schema.STATISTICS WHERE ${w.sql} ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX`,
    w.params,
    1000,
  );
  const foreign = keys.filter((k) => text(k, 'name') !== 'PRIMARY');
  return {
    schema: table.schema,
    table: table.table,
    kind: table.kind,
    comment: table.comment,
    columns: describeColumns(columns, MYSQL_COLUMNS),
    primaryKey: keys.filter((k) => text(k, 'name') === 'PRIMARY').map((k) => name(k, 'column_name')),
    foreignKeys: [...groupBy(foreign, (k) => name(k, 'name')).values()].map((rows) => ({
      name: name(rows[0] ?? {}, 'name'),
      columns: rows.map((k) => name(k, 'column_name')),
      refSchema: name(rows[0] ?? {}, 'ref_schema'),
      refTable: name(rows[0] ?? {}, 'ref_table'),
      refColumns: rows.map((k) => name(k, 'ref_column')),
    })),
    indexes: [...groupBy(indexes, (i) => name(i, 'name')).values()].map((rows) => ({
      name: name(rows[0] ?? {}, 'name'),
      columns: rows.map((i) => text(i, 'column_name') ?? '(expression)'),
      unique: !flag(rows[0] ?? {}, 'non_unique'),
      primary: text(rows[0] ?? {}, 'name') === 'PRIMARY',
    })),
  };
}
