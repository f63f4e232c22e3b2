import { describe, expect, it } from 'vitest';
import { capCatalogResult, capQueryResult, resultBudget } from '../../../../daemon/queries/result-cap.js';
import { cliCommand } from '../../../../shared/cli-command.js';

const budget = resultBudget('shop', 8 * 1024);
const size = (v: unknown) => 2 * Buffer.byteLength(JSON.stringify(v));

describe('capCatalogResult', () => {
  it('leaves an answer that fits untouched', () => {
    const answer = { schema: 'main', tables: [{ name: 'a' }], total: 1, truncated: false };
    expect(capCatalogResult(answer, budget)).toBe(answer);
  });

  it('cuts long texts, drops entries from the longest list, and says so', () => {
    const tables = Array.from({ length: 500 }, (_, i) => ({ name: `t${i}`, comment: 'x'.repeat(i === 0 ? 5000 : 20) }));
    const capped = capCatalogResult({ schema: 'main', tables, total: 500, truncated: false }, budget);
    expect(size(capped)).toBeLessThanOrEqual(budget.bytes);
    expect(capped.truncated).toBe(true);
    expect(capped.total).toBe(500);
    expect(capped.tables[0]?.comment).toMatch(/^x{100}…\[cut\]$/);
    expect(capped.cut?.rowsLeftOut).toBe(500 - capped.tables.length);
    expect(capped.cut?.note).toMatch(/entries left out; 1 text of comment cut to 100 characters\. For less, pass a pattern/);
    expect(capped.cut?.note).toContain(`${cliCommand()} set shop --max-result-bytes`);
  });

  it('does not offer `hanactl set` for a project connection', () => {
    const capped = capCatalogResult(
      { hits: Array.from({ length: 900 }, (_, i) => ({ name: `n${i}` })), total: 900, truncated: false },
      resultBudget('project:app', 4096),
    );
    expect(capped.cut?.note).not.toContain(`${cliCommand()} set`);
  });
});

describe('capQueryResult', () => {
  it('keeps a row too wide for the budget by cutting its cells shorter', () => {
    const columns = Array.from({ length: 8 }, (_, i) => ({ name: `c${i}`, type: 'TEXT' }));
    const row = Object.fromEntries(columns.map((c) => [c.name, 'y'.repeat(1000)]));
    const capped = capQueryResult({ columns, rows: [row, row], rowCount: 2, truncated: false, durationMs: 1 }, resultBudget('shop', 8192));
    expect(capped.rowCount).toBeGreaterThanOrEqual(1);
    expect(size(capped.rows)).toBeLessThan(8192);
    expect(capped.cut?.cellsCut).toBe(8 * capped.rowCount);
  });

  it('never splits a surrogate pair', () => {
    const capped = capQueryResult(
      { columns: [{ name: 'e', type: 'TEXT' }], rows: [{ e: `${'a'.repeat(99)}😀😀` }], rowCount: 1, truncated: false, durationMs: 1 },
      budget,
    );
    expect(capped.rows[0]?.e).toBe(`${'a'.repeat(99)}…[cut]`);
  });
});
