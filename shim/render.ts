import type { QueryResult } from '../shared/schemas.js';
import { renderTable } from '../shared/text-table.js';

/** The text form of a query result: a summary line, then the table. */
export function renderQueryResult(result: QueryResult, maxRows: number): string {
  if (result.columns.length === 0) {
    const affected = result.affectedRows !== undefined ? `${result.affectedRows} row(s) affected` : 'Statement executed';
    return `${affected} (${result.durationMs} ms).`;
  }
  const summary = result.truncated
    ? `${result.rowCount} rows shown; more rows exist (capped at maxRows=${maxRows}). Narrow the query with WHERE/LIMIT or raise maxRows.`
    : `${result.rowCount} row${result.rowCount === 1 ? '' : 's'} (${result.durationMs} ms).`;
  if (result.rowCount === 0) return `${summary}\nColumns: ${result.columns.map((c) => c.name).join(', ')}`;
  return `${summary}\n${renderTable(
    result.columns.map((c) => c.name),
    result.rows,
  )}`;
}
