import type { TableDescription } from '../../../shared/catalog-schemas.js';
import type { CatalogExecutor, TableRef } from '../../catalog/catalog.js';
import { flag, groupBy, name, num, text } from '../../catalog/catalog-sql.js';

const COLUMNS_SQL = `SELECT name, type, "notnull" AS not_null, dflt_value, pk FROM pragma_table_xinfo(?, ?) WHERE hidden <> 1 ORDER BY cid`;
const FOREIGN_KEYS_SQL = `SELECT id, seq, "table" AS ref_table, "from" AS from_column, "to" AS to_column FROM pragma_foreign_key_list(?, ?) ORDER BY id, seq`;
const INDEXES_SQL = `SELECT il.name AS name, il."unique" AS is_unique, il.origin AS origin, ii.name AS column_name
FROM pragma_index_list(?, ?) il JOIN pragma_index_xinfo(il.name, ?) ii ON ii.key = 1 ORDER BY il.name, ii.seqno`;

/**
 * Columns (`pk` gives the primary key's order), foreign keys (grouped by `id`; `to` is NULL
 * when the key references the parent's primary key implicitly) and indexes of a proven table.
 * SQLite has no table comments. An `INTEGER PRIMARY KEY` (a rowid alias) has no index entry.
 */
export async function describeSqliteTable(run: CatalogExecutor, table: TableRef): Promise<TableDescription> {
  const args = [table.table, table.schema];
  const columns = await run(COLUMNS_SQL, args, 5000);
  const foreignKeys = await run(FOREIGN_KEYS_SQL, args, 1000);
  const indexes = await run(INDEXES_SQL, [...args, table.schema], 1000);
  const primaryKey = columns
    .filter((c) => (num(c, 'pk') ?? 0) > 0)
    .sort((a, b) => (num(a, 'pk') ?? 0) - (num(b, 'pk') ?? 0))
    .map((c) => name(c, 'name'));
  return {
    schema: table.schema,
    table: table.table,
    kind: table.kind,
    comment: null,
    columns: columns.map((c) => ({
      name: name(c, 'name'),
      type: name(c, 'type'),
      nullable: !flag(c, 'not_null') && !((num(c, 'pk') ?? 0) > 0 && name(c, 'type').toUpperCase() === 'INTEGER'),
      default: text(c, 'dflt_value'),
      comment: null,
    })),
    primaryKey,
    foreignKeys: [...groupBy(foreignKeys, (f) => name(f, 'id')).values()].map((rows) => {
      const first = rows[0];
      return {
        name: `fk_${name(first ?? {}, 'id')}`,
        columns: rows.map((f) => name(f, 'from_column')),
        refSchema: table.schema,
        refTable: first ? name(first, 'ref_table') : '',
        refColumns: rows.flatMap((f) => (text(f, 'to_column') === null ? [] : [name(f, 'to_column')])),
      };
    }),
    indexes: [...groupBy(indexes, (i) => name(i, 'name')).values()].map((rows) => ({
      name: name(rows[0] ?? {}, 'name'),
      columns: rows.map((i) => text(i, 'column_name') ?? '(expression)'),
      unique: flag(rows[0] ?? {}, 'is_unique'),
      primary: text(rows[0] ?? {}, 'origin') === 'pk',
    })),
  };
}
