const MAX_CELL = 200;

function cell(value: unknown, maxCell: number): string {
  let text: string;
  if (value === null || value === undefined) text = 'NULL';
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\r?\n/g, '\\n').replace(/\t/g, ' ');
  return text.length > maxCell ? `${text.slice(0, maxCell)}…[cut]` : text;
}

/**
 * A compact, aligned text table, for agents and terminals alike. Cells are cut at `maxCell`
 * characters; query results pass `Infinity`, the daemon having cut their cells already (the
 * same cut the structured rows carry).
 */
export function renderTable(columns: readonly string[], rows: readonly Record<string, unknown>[], maxCell = MAX_CELL): string {
  const cells = rows.map((row) => columns.map((c) => cell(row[c], maxCell)));
  const widths = columns.map((c, i) => Math.min(60, Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length))));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join(' | ')
      .trimEnd();
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n');
}
