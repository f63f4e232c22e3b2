import type { CatalogRow } from '../../catalog/catalog.js';
import { num, text } from '../../catalog/catalog-sql.js';

/**
 * EXPLAIN_PLAN_TABLE rows as an indented tree: operator, its table and details, engine,
 * estimated rows (OUTPUT_SIZE) and cost (SUBTREE_COST). Indentation follows LEVEL (1 for the root).
 */
export function hanaPlanText(rows: readonly CatalogRow[]): string {
  return rows
    .map((r) => {
      const level = Math.max(0, (num(r, 'LEVEL') ?? 1) - 1);
      const table = text(r, 'TABLE_NAME');
      const parts = [text(r, 'OPERATOR_NAME') ?? '?'];
      if (table) parts.push(`on ${text(r, 'SCHEMA_NAME') ? `${text(r, 'SCHEMA_NAME')}.` : ''}${table}`);
      const engine = text(r, 'EXECUTION_ENGINE');
      if (engine) parts.push(`[${engine}]`);
      parts.push(`(rows=${text(r, 'OUTPUT_SIZE') ?? '?'} cost=${text(r, 'SUBTREE_COST') ?? '?'})`);
      const details = text(r, 'OPERATOR_DETAILS');
      const line = `${'  '.repeat(level)}${level > 0 ? '-> ' : ''}${parts.join(' ')}`;
      return details ? `${line}\n${'  '.repeat(level)}     ${details.replace(/\s+/g, ' ').trim()}` : line;
    })
    .join('\n');
}
