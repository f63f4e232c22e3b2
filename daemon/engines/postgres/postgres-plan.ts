type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };

const CONDITIONS = ['Index Cond', 'Recheck Cond', 'Hash Cond', 'Merge Cond', 'Join Filter', 'Filter', 'Sort Key', 'Group Key'];

function nodeLine(node: PlanNode): string {
  const parts = [String(node['Node Type'] ?? '?')];
  if (node['Join Type'] && node['Node Type'] !== 'Hash') parts[0] = `${parts[0]} (${String(node['Join Type'])})`;
  if (node['Index Name']) parts.push(`using ${String(node['Index Name'])}`);
  if (node['Relation Name']) {
    const relation = node.Schema ? `${String(node.Schema)}.${String(node['Relation Name'])}` : String(node['Relation Name']);
    parts.push(`on ${relation}${node.Alias && node.Alias !== node['Relation Name'] ? ` ${String(node.Alias)}` : ''}`);
  }
  if (node['Total Cost'] !== undefined)
    parts.push(`(cost=${String(node['Startup Cost'])}..${String(node['Total Cost'])} rows=${String(node['Plan Rows'])})`);
  return parts.join(' ');
}

function walk(node: PlanNode, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  out.push(`${pad}${depth > 0 ? '-> ' : ''}${nodeLine(node)}`);
  for (const key of CONDITIONS) {
    const value = node[key];
    if (value !== undefined) out.push(`${pad}     ${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  for (const child of node.Plans ?? []) walk(child, depth + 1, out);
}

/**
 * PostgreSQL's `EXPLAIN (FORMAT JSON)` answer (`[{"Plan": {...}}]`) as the familiar indented
 * tree: node, relation, cost and rows estimate, then its conditions; children as `->`.
 */
export function postgresPlanText(plan: unknown): string {
  const root = Array.isArray(plan) ? (plan[0] as { Plan?: PlanNode } | undefined)?.Plan : undefined;
  if (!root) return JSON.stringify(plan);
  const out: string[] = [];
  walk(root, 0, out);
  return out.join('\n');
}

/**
 * Keys of a PostgreSQL JSON plan that carry the planner's or the executor's figures: estimates,
 * costs, widths, actual rows and loops, rows removed, buffers, timings, memory, WAL. A plan node's
 * shape (node type, relation, index, conditions, keys) stays.
 */
const FIGURE_KEY =
  /cost|rows|width|loops|time|buffers|blocks|memory|wal |wal$|batches|disk|peak|workers|groups|heap fetches|exact|lossy|pre-sorted/i;

/** A JSON plan with every figure key dropped at every depth (the second layer behind `COSTS OFF`). */
export function withoutFigures(plan: unknown): unknown {
  if (Array.isArray(plan)) return plan.map(withoutFigures);
  if (plan === null || typeof plan !== 'object') return plan;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(plan)) if (!FIGURE_KEY.test(key)) out[key] = withoutFigures(value);
  return out;
}
