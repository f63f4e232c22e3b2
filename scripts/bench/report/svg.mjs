// bench/latency.svg: the latency figures as horizontal bars on a log scale, hand-written SVG.

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toFixed(3));

/** The groups of bars the chart shows, from whatever figures were measured. */
export function latencySeries(results) {
  const f = results.figures;
  const c = results.counts;
  const ok = (k) => f[k] && !f[k].error && !f[k].skipped;
  const groups = [];
  if (ok('latency')) {
    const items = [
      { label: 'hanactl (relay → daemon → pool)', ...f.latency.hanactl, accent: true },
      ...(f.latency.separated ? [{ label: 'hanactl, rows separated (context value)', ...f.latency.separated, accent: true }] : []),
      { label: 'in-process MCP server', ...f.latency.inproc },
      ...(f.latency.dbhub ? [{ label: 'DBHub (process per session)', ...f.latency.dbhub }] : []),
      { label: 'floor: warm pg client, no MCP', ...f.latency.floor },
    ];
    if (ok('spawnPerCall')) items.push({ label: 'spawn per call', ...f.spawnPerCall });
    groups.push({ title: `run_query SELECT 1, one call at a time (${c.calls} calls; spawn ${c.spawnCalls})`, items });
  }
  for (const [key, engine] of [
    ['concurrencyPg', 'PostgreSQL'],
    ['concurrencyMaria', 'MariaDB'],
  ]) {
    if (!ok(key)) continue;
    groups.push({
      title: `${c.concurrency.sessions} sessions × ${c.concurrency.calls} calls at once, ${engine}`,
      items: [
        { label: 'hanactl', ...f[key].hanactl, accent: true },
        { label: `${c.concurrency.sessions} in-process servers`, ...f[key].inproc },
      ],
    });
  }
  if (ok('coldStart')) {
    const cs = f.coldStart;
    groups.push({
      title: `cold start, spawn → tools/list (median and max of ${c.coldStarts})`,
      items: [
        { label: 'bin/hanactl-mcp (relay)', p50: cs.relay.median, p99: cs.relay.max, accent: true },
        { label: 'node dist/shim.cjs mcp', p50: cs.bundle.median, p99: cs.bundle.max },
        { label: 'node bin/hanactl.js mcp', p50: cs.fullCli.median, p99: cs.fullCli.max },
        ...(cs.dbhub ? [{ label: 'DBHub', p50: cs.dbhub.median, p99: cs.dbhub.max }] : []),
        { label: 'bare SDK server', p50: cs.bare.median, p99: cs.bare.max },
      ],
    });
  }
  if (ok('bigTable')) {
    groups.push({
      title: `SELECT * FROM ${c.bigTableRows.toLocaleString('en')} rows, maxRows 100 (median and max)`,
      items: [{ label: 'hanactl', p50: f.bigTable.p50, p99: f.bigTable.max, accent: true }],
    });
  }
  return groups;
}

/** Renders the groups; the darker bar is p50 (median), the lighter one p99 (max where so titled). */
export function renderLatencySvg(groups, { subtitle = '' } = {}) {
  const width = 960;
  const labelWidth = 300;
  const plotWidth = 560;
  const left = labelWidth + 10;
  const values = groups.flatMap((g) => g.items.flatMap((i) => [i.p50, i.p99])).filter((v) => Number.isFinite(v) && v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values, 1)));
  const xOf = (v) => left + (Math.log10(Math.max(v, lo) / lo) / Math.log10(hi / lo)) * plotWidth;
  const parts = [];
  let y = 70;
  for (const group of groups) {
    parts.push(`<text x="10" y="${y}" class="group">${esc(group.title)}</text>`);
    y += 10;
    for (const item of group.items) {
      const fill = item.accent ? '#1f6feb' : '#6e7781';
      const light = item.accent ? '#9cc2f7' : '#c9cfd6';
      parts.push(`<text x="${labelWidth}" y="${y + 13}" class="label" text-anchor="end">${esc(item.label)}</text>`);
      if (Number.isFinite(item.p99)) {
        parts.push(`<rect x="${left}" y="${y + 11}" width="${(xOf(item.p99) - left).toFixed(1)}" height="9" fill="${light}"/>`);
        parts.push(`<text x="${(xOf(item.p99) + 4).toFixed(1)}" y="${y + 19}" class="value">${fmt(item.p99)}</text>`);
      }
      parts.push(`<rect x="${left}" y="${y + 2}" width="${(xOf(item.p50) - left).toFixed(1)}" height="9" fill="${fill}"/>`);
      parts.push(`<text x="${(xOf(item.p50) + 4).toFixed(1)}" y="${y + 10}" class="value">${fmt(item.p50)}</text>`);
      y += 26;
    }
    y += 14;
  }
  const top = 48;
  const grid = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const gx = xOf(v).toFixed(1);
    grid.push(`<line x1="${gx}" y1="${top}" x2="${gx}" y2="${y - 10}" class="grid"/>`);
    grid.push(`<text x="${gx}" y="${y + 4}" class="axis" text-anchor="middle">${fmt(v)} ms</text>`);
  }
  const height = y + 40;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">
<style>
.title { font-size: 16px; font-weight: 600; fill: #1f2328; }
.sub { font-size: 11px; fill: #57606a; }
.group { font-size: 12px; font-weight: 600; fill: #1f2328; }
.label { font-size: 11px; fill: #1f2328; }
.value { font-size: 10px; fill: #57606a; }
.axis { font-size: 10px; fill: #57606a; }
.grid { stroke: #d0d7de; stroke-width: 1; stroke-dasharray: 2 3; }
</style>
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="10" y="22" class="title">hanactl latency, milliseconds (log scale)</text>
<text x="10" y="38" class="sub">${esc(subtitle)} · dark bar p50, light bar p99</text>
${grid.join('\n')}
${parts.join('\n')}
<text x="10" y="${height - 12}" class="sub">Regenerate with npm run bench; numbers in RESULTS.md and results.json.</text>
</svg>
`;
}
