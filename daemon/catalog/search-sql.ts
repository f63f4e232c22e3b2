import type { ObjectKind, SearchHit, SearchResult } from '../../shared/catalog-schemas.js';
import type { CatalogExecutor, CatalogRow } from './catalog.js';
import { type Binder, capInfo, name, text } from './catalog-sql.js';

/**
 * One branch of `search_objects` per object kind. Each answers five columns in this order:
 * kind, schema, name, the column's table (else NULL), detail (a column's type, a routine's
 * arguments, else NULL); the branch for the first kind must label them `kind`, `schema_name`,
 * `object_name`, `parent_name`, `detail`, which `labels` does.
 */
export type SearchBranches = Partial<Record<ObjectKind, (labels: boolean) => string>>;

/**
 * How an engine writes the search's ranking of kinds and its count: PostgreSQL names its
 * operators and functions by schema (a login's search_path may put a person's `=` first).
 */
export interface SearchWords {
  /** An expression over the `kind` column: 1 for tables, 2 views, 3 routines, 4 columns. */
  readonly order: string;
  /** The count of all rows, as a window function's call (`COUNT(*)`). */
  readonly count: string;
}

const PLAIN_WORDS: SearchWords = {
  order: `CASE kind WHEN 'table' THEN 1 WHEN 'view' THEN 2 WHEN 'routine' THEN 3 ELSE 4 END`,
  count: 'COUNT(*)',
};
const LABELS = ['kind', 'schema_name', 'object_name', 'parent_name', 'detail'] as const;

/** Labels five select-list expressions as the search columns (or leaves them as they are). */
export function searchColumns(labels: boolean, ...expressions: [string, string, string, string, string]): string {
  return expressions.map((e, i) => (labels ? `${e} AS ${LABELS[i]}` : e)).join(', ');
}

/**
 * The UNION ALL of the requested kinds' branches, tables first, then views, routines and
 * columns, each by schema and name, with the match count in `total`. Null when the engine has
 * no branch for any requested kind (SQLite has no routines).
 */
export function searchSql(branches: SearchBranches, kinds: readonly ObjectKind[], words: SearchWords = PLAIN_WORDS): string | null {
  const parts = [...new Set(kinds)].flatMap((k) => {
    const branch = branches[k];
    return branch ? [branch] : [];
  });
  if (parts.length === 0) return null;
  const union = parts.map((branch, i) => branch(i === 0)).join('\nUNION ALL\n');
  return `SELECT kind, schema_name, object_name, parent_name, detail, ${words.count} OVER () AS total
FROM (${union}) hits
ORDER BY ${words.order}, schema_name, parent_name, object_name`;
}

/** Maps search rows (keys in lower case) to hits. */
export function searchHits(rows: readonly CatalogRow[]): SearchResult {
  const hits: SearchHit[] = rows.map((r) => ({
    kind: name(r, 'kind') as ObjectKind,
    schema: name(r, 'schema_name'),
    name: name(r, 'object_name'),
    table: text(r, 'parent_name'),
    detail: text(r, 'detail'),
  }));
  return { hits, ...capInfo(rows, 'total') };
}

/** The answer for a search no branch can serve. */
export const NO_HITS: SearchResult = { hits: [], total: 0, truncated: false };

/**
 * Runs `search_objects` over an engine's `branches`, whose patterns bind into `b` as they are
 * built: NO_HITS when no branch serves the requested kinds, else the hits (rows read through
 * `row` first: HANA answers its labels in upper case), ranked and counted in the engine's `words`.
 */
export async function runSearch(
  run: CatalogExecutor,
  branches: SearchBranches,
  b: Binder,
  query: { readonly kinds: readonly ObjectKind[]; readonly limit: number },
  row: (r: CatalogRow) => CatalogRow = (r) => r,
  words: SearchWords = PLAIN_WORDS,
): Promise<SearchResult> {
  const sql = searchSql(branches, query.kinds, words);
  if (!sql) return NO_HITS;
  return searchHits((await run(sql, b.params, query.limit)).map(row));
}
