// BASELINE for the benchmark, not part of hanactl: the design hanactl replaces — one MCP
// stdio server per agent session with its own driver pool in the same process.
// `node inproc-server.mjs --url postgres://... | mysql://... | sqlite:/path [--app-name NAME]`
// Its run_query tool takes and returns the same shapes as hanactl's, so the difference
// measured is the broker (shim -> Unix socket -> daemon -> pool, and its read-only
// transaction), not a different contract. It holds a warm connection before it answers.
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const { values } = parseArgs({ options: { url: { type: 'string' }, 'app-name': { type: 'string' } } });
if (!values.url) {
  process.stderr.write('inproc-server: --url is required\n');
  process.exit(2);
}
const appName = values['app-name'] ?? 'hanactl-bench-inproc';

/** `{columns, rows}` for one statement, on whichever engine the URL names. */
async function openDatabase(url) {
  if (url.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3-multiple-ciphers');
    const db = new Database(url.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    return {
      end: async () => db.close(),
      async query(sql, params) {
        const stmt = db.prepare(sql);
        return { columns: stmt.columns().map((c) => ({ name: c.name, type: c.type ?? '' })), rows: stmt.all(...params) };
      },
    };
  }
  if (/^postgres(ql)?:/.test(url)) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: url, application_name: appName, max: 10 });
    return {
      end: () => pool.end(),
      async query(sql, params) {
        const res = await pool.query({ text: sql, values: params });
        return { columns: res.fields.map((f) => ({ name: f.name, type: String(f.dataTypeID) })), rows: res.rows };
      },
    };
  }
  const { default: mysql } = await import('mysql2/promise');
  const pool = mysql.createPool({ uri: url.replace(/^mariadb:/, 'mysql:'), connectionLimit: 10 });
  return {
    end: () => pool.end(),
    async query(sql, params) {
      const [rows, fields] = await pool.query(sql, params);
      return { columns: (fields ?? []).map((f) => ({ name: f.name, type: String(f.columnType) })), rows: Array.isArray(rows) ? rows : [] };
    },
  };
}

const db = await openDatabase(values.url);
await db.query('SELECT 1', []); // a warm connection, as a long-lived server holds

const server = new McpServer({ name: 'inproc-baseline', version: '1.0.0' });
server.registerTool(
  'run_query',
  {
    description: 'Run one SQL statement.',
    inputSchema: {
      sql: z.string().min(1),
      params: z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
      maxRows: z.number().int().min(1).max(10000).optional(),
    },
    outputSchema: {
      columns: z.array(z.object({ name: z.string(), type: z.string() })),
      rows: z.array(z.record(z.string(), z.unknown())),
      rowCount: z.number(),
      truncated: z.boolean(),
    },
  },
  async ({ sql, params, maxRows = 100 }) => {
    try {
      const { columns, rows: all } = await db.query(sql, params ?? []);
      const truncated = all.length > maxRows;
      const rows = truncated ? all.slice(0, maxRows) : all;
      const text = `${rows.length} row(s)\n${columns.map((c) => c.name).join('\t')}\n${rows.map((r) => Object.values(r).join('\t')).join('\n')}`;
      return { content: [{ type: 'text', text }], structuredContent: { columns, rows, rowCount: rows.length, truncated } };
    } catch (err) {
      return { content: [{ type: 'text', text: `error: ${err.message}` }], isError: true };
    }
  },
);
await server.connect(new StdioServerTransport());
// A session ends when its client closes stdin; the pool would otherwise keep the process alive.
process.stdin.on('end', () => {
  void db.end().finally(() => process.exit(0));
});
