type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line per table access the plan holds, indented by nesting, and the query cost when given. */
function walk(node: unknown, depth: number, out: string[]): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, depth, out);
    return;
  }
  if (!isObject(node)) return;
  const table = node.table;
  let next = depth;
  if (isObject(table) && (table.table_name !== undefined || table.message !== undefined)) {
    const parts = [table.table_name !== undefined ? `table ${String(table.table_name)}` : String(table.message)];
    if (table.access_type) parts.push(`access=${String(table.access_type)}`);
    if (table.key) parts.push(`key=${String(table.key)}`);
    const rows = table.rows_examined_per_scan ?? table.rows;
    if (rows !== undefined) parts.push(`rows=${String(rows)}`);
    if (table.filtered !== undefined) parts.push(`filtered=${String(table.filtered)}%`);
    out.push(`${'  '.repeat(depth)}${depth > 0 ? '-> ' : ''}${parts.join(' ')}`);
    if (table.attached_condition) out.push(`${'  '.repeat(depth)}     condition: ${String(table.attached_condition)}`);
    next = depth + 1;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key !== 'table') walk(value, next, out);
    else if (isObject(value)) walk(Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'table_name')), next, out);
  }
}

/**
 * MySQL/MariaDB `EXPLAIN FORMAT=JSON` read as lines per table access (name, access type, key,
 * rows estimate, condition); the full JSON stays in the result's `plan`.
 */
export function mysqlPlanText(plan: unknown): string {
  if (!isObject(plan)) return String(plan);
  const out: string[] = [];
  const block = plan.query_block;
  const cost = isObject(block) && isObject(block.cost_info) ? block.cost_info.query_cost : undefined;
  if (cost !== undefined) out.push(`query cost ${String(cost)}`);
  walk(plan, 0, out);
  return out.length > 0 ? out.join('\n') : JSON.stringify(plan);
}
