import type { TableDescription } from '../../../shared/catalog-schemas.js';
import type { CatalogExecutor, CatalogRow, TableRef } from '../../catalog/catalog.js';
import { groupBy, name, num, text } from '../../catalog/catalog-sql.js';
import { type ColumnMapping, describeColumns } from '../../catalog/describe-columns.js';

/** Columns of a table or a view (the view's own column catalog), in position order. */
const COLUMNS_SQL = `SELECT COLUMN_NAME, DATA_TYPE_NAME, "LENGTH", SCALE, IS_NULLABLE, DEFAULT_VALUE, COMMENTS, POSITION
  FROM SYS.TABLE_COLUMNS WHERE SCHEMA_NAME = ? AND TABLE_NAME = ?
UNION ALL
SELECT COLUMN_NAME, DATA_TYPE_NAME, "LENGTH", SCALE, IS_NULLABLE, DEFAULT_VALUE, COMMENTS, POSITION
  FROM SYS.VIEW_COLUMNS WHERE SCHEMA_NAME = ? AND VIEW_NAME = ?
ORDER BY POSITION`;

const PRIMARY_KEY_SQL = `SELECT COLUMN_NAME FROM SYS.CONSTRAINTS
  WHERE SCHEMA_NAME = ? AND TABLE_NAME = ? AND IS_PRIMARY_KEY = 'TRUE' ORDER BY POSITION`;

const FOREIGN_KEYS_SQL = `SELECT CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_SCHEMA_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
  FROM SYS.REFERENTIAL_CONSTRAINTS WHERE SCHEMA_NAME = ? AND TABLE_NAME = ? ORDER BY CONSTRAINT_NAME, POSITION`;

const INDEXES_SQL = `SELECT i.INDEX_NAME, i."CONSTRAINT", c.COLUMN_NAME
  FROM SYS.INDEXES i JOIN SYS.INDEX_COLUMNS c
    ON c.SCHEMA_NAME = i.SCHEMA_NAME AND c.TABLE_NAME = i.TABLE_NAME AND c.INDEX_NAME = i.INDEX_NAME
  WHERE i.SCHEMA_NAME = ? AND i.TABLE_NAME = ? ORDER BY i.INDEX_NAME, c.POSITION`;

/** Types whose length is part of the type (`NVARCHAR(40)`); DECIMAL also shows its scale. */
const SIZED = new Set(['VARCHAR', 'NVARCHAR', 'CHAR', 'NCHAR', 'ALPHANUM', 'SHORTTEXT', 'VARBINARY', 'BINARY']);

/** A HANA column type as DDL spells it, from DATA_TYPE_NAME, LENGTH and SCALE. */
export function hanaType(row: CatalogRow): string {
  const type = name(row, 'DATA_TYPE_NAME');
  const length = num(row, 'LENGTH');
  const scale = num(row, 'SCALE');
  if (SIZED.has(type) && length !== null) return `${type}(${length})`;
  if (type === 'DECIMAL' && length !== null && scale !== null) return `DECIMAL(${length},${scale})`;
  return type;
}

/** The cells of `COLUMNS_SQL`; defaults and comments are passed on as read. */
const HANA_COLUMNS: ColumnMapping = {
  cells: { name: 'COLUMN_NAME', nullable: 'IS_NULLABLE', default: 'DEFAULT_VALUE', comment: 'COMMENTS' },
  type: hanaType,
};

/**
 * Columns, primary key (SYS.CONSTRAINTS), foreign keys (SYS.REFERENTIAL_CONSTRAINTS) and
 * indexes (SYS.INDEXES, whose CONSTRAINT says `PRIMARY KEY` or `UNIQUE`/`NOT NULL UNIQUE`)
 * of a proven table or view. Views have columns only.
 */
export async function describeHanaTable(run: CatalogExecutor, table: TableRef): Promise<TableDescription> {
  const args = [table.schema, table.table];
  const columns = await run(COLUMNS_SQL, [...args, ...args], 5000);
  const primaryKey = await run(PRIMARY_KEY_SQL, args, 1000);
  const foreignKeys = await run(FOREIGN_KEYS_SQL, args, 1000);
  const indexes = await run(INDEXES_SQL, args, 1000);
  return {
    schema: table.schema,
    table: table.table,
    kind: table.kind,
    comment: table.comment,
    columns: describeColumns(columns, HANA_COLUMNS),
    primaryKey: primaryKey.map((k) => name(k, 'COLUMN_NAME')),
    foreignKeys: [...groupBy(foreignKeys, (k) => name(k, 'CONSTRAINT_NAME')).values()].map((rows) => ({
      name: name(rows[0] ?? {}, 'CONSTRAINT_NAME'),
      columns: rows.map((k) => name(k, 'COLUMN_NAME')),
      refSchema: name(rows[0] ?? {}, 'REFERENCED_SCHEMA_NAME'),
      refTable: name(rows[0] ?? {}, 'REFERENCED_TABLE_NAME'),
      refColumns: rows.map((k) => name(k, 'REFERENCED_COLUMN_NAME')),
    })),
    indexes: [...groupBy(indexes, (i) => name(i, 'INDEX_NAME')).values()].map((rows) => {
      const constraint = text(rows[0] ?? {}, 'CONSTRAINT') ?? '';
      return {
        name: name(rows[0] ?? {}, 'INDEX_NAME'),
        columns: rows.map((i) => name(i, 'COLUMN_NAME')),
        unique: constraint.includes('UNIQUE') || constraint === 'PRIMARY KEY',
        primary: constraint === 'PRIMARY KEY',
      };
    }),
  };
}
