import { objection } from './objections.js';
import type { Objection, Token } from './types.js';

/**
 * PostgreSQL's system columns (docs: ddl-system-columns; sysattr.h) that are physical or
 * transaction coordinates every row shares with the rows a policy hides: ctid is the tuple's
 * position (the gaps between a caller's own positions count the hidden tuples, max(ctid) bounds
 * the table's size), xmin/xmax are transaction ids (their gaps count other sessions' writing
 * transactions), cmin/cmax command ids within them. tableoid is left out: it names the relation
 * that holds the caller's own row (a partition's oid, readable in pg_class anyway) and counts
 * nothing. No user column can take one of these names (the server refuses it), so as a column
 * reference each is always the system column, however written: bare, qualified (t.ctid),
 * attribute notation ((t).ctid, (t.*).ctid), functional notation (ctid(t)), quoted ("ctid").
 */
export const PG_COORDINATE_COLUMNS: ReadonlySet<string> = new Set(['ctid', 'xmin', 'xmax', 'cmin', 'cmax']);

/** The attribute numbers of those columns in a stored query tree (sysattr.h: ctid -1 ... cmax -5; tableoid -6 is not one). */
export const PG_COORDINATE_ATTNUMS = [-1, -2, -3, -4, -5] as const;

const HINT = "Identify and order rows by the table's own key (its primary key or another column) instead.";

/** The refusal for reading the system column `name` (or TABLESAMPLE) on a connection that separates rows. */
export function systemColumnObjection(name: string): Objection {
  const folded = name.toLowerCase();
  const what =
    name === 'TABLESAMPLE'
      ? 'TABLESAMPLE picks rows by the pages that hold them, so what it returns depends on the rows context values hide from you'
      : folded === 'ctid'
        ? "the system column ctid is a row's physical position in the table, so the gaps between your rows' positions count the rows context values hide from you"
        : `the system column ${folded} is a transaction or command id, so its values count other callers' transactions on rows context values hide from you`;
  return objection('system-column', `Refused: ${what}.`, HINT);
}

/** The refusal for a name (as PostgreSQL folds it) it reads as such a column where rows are separated, or undefined. */
export function systemColumnNameObjection(folded: string): Objection | undefined {
  return PG_COORDINATE_COLUMNS.has(folded) ? systemColumnObjection(folded) : undefined;
}

/**
 * The token rules' side where rows are separated: every word or quoted name that is one of those
 * columns or TABLESAMPLE, wherever it appears (an alias of that name is refused too: only refuses
 * more), and a quoted name written with escapes (U&"\0063tid" is ctid), which cannot be read here.
 */
export function postgresSystemColumnRule(tokens: readonly Token[]): Objection | undefined {
  for (const token of tokens) {
    if (token.kind !== 'word' && token.kind !== 'quoted') continue;
    if (token.kind === 'quoted' && token.opaque) {
      return objection(
        'system-column',
        "Refused: a name is written with escapes, and on this connection it could spell a system column (ctid, xmin, xmax, cmin, cmax) whose values count the rows context values hide from you; it cannot be checked.",
        'Write the name plainly.',
      );
    }
    // A quoted name keeps its case ("CTID" is no system column); TABLESAMPLE is a keyword, never quoted.
    const folded = token.kind === 'quoted' ? token.text : token.text.toLowerCase();
    if (token.kind === 'word' && folded === 'tablesample') return systemColumnObjection('TABLESAMPLE');
    const refused = systemColumnNameObjection(folded);
    if (refused) return refused;
  }
  return undefined;
}
