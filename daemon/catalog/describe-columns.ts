import type { ColumnInfo } from '../../shared/catalog-schemas.js';
import type { CatalogRow } from './catalog.js';
import { flag, name, text } from './catalog-sql.js';

/** Where one engine's column query puts each field, and the engine's own rules for reading them. */
export interface ColumnMapping {
  /** The cells holding the column name, its nullability (`YES`, `TRUE`, true…), its default and its comment. */
  readonly cells: { readonly name: string; readonly nullable: string; readonly default: string; readonly comment: string };
  /** The column type as DDL spells it. */
  readonly type: (row: CatalogRow) => string;
  /** The default from the text the server prints for it: null for none. As printed when not given. */
  readonly defaultValue?: (printed: string | null) => string | null;
  /** The comment from the text read for it: null for none. As read when not given. */
  readonly comment?: (read: string | null) => string | null;
}

/** A column query that names its fields `name`, `type`, `nullable`, `default_value` and `comment`. */
export function aliasedColumns(rules: Pick<ColumnMapping, 'defaultValue' | 'comment'> = {}): ColumnMapping {
  return {
    cells: { name: 'name', nullable: 'nullable', default: 'default_value', comment: 'comment' },
    type: (row) => name(row, 'type'),
    ...rules,
  };
}

const asRead = (value: string | null) => value;

/** The columns of a table description, one a row of the engine's column query, in the query's order. */
export function describeColumns(rows: readonly CatalogRow[], mapping: ColumnMapping): ColumnInfo[] {
  const { cells, type, defaultValue = asRead, comment = asRead } = mapping;
  return rows.map((row) => ({
    name: name(row, cells.name),
    type: type(row),
    nullable: flag(row, cells.nullable),
    default: defaultValue(text(row, cells.default)),
    comment: comment(text(row, cells.comment)),
  }));
}
