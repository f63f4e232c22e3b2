// One MCP session: the SDK's real Client over stdio to a spawned server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * Starts `command args` as an MCP stdio server and connects a Client (initialize included).
 * The session is closed by the cleanup registry if the caller does not close it first.
 * `tool` is the server's query tool (hanactl's and the baseline's `run_query`, DBHub's `execute_sql`).
 */
export async function openSession({ command, args = [], env, cleanup, label = command, tool = 'run_query' }) {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const client = new Client({ name: 'hanactl-bench', version: '1.0.0' });
  const forget = cleanup.add(`close ${label}`, () => client.close());
  try {
    await client.connect(transport);
  } catch (err) {
    await forget();
    throw new Error(`${label} did not start: ${err.message}${stderr ? `; stderr: ${stderr.trim()}` : ''}`);
  }
  return {
    client,
    transport,
    pid: transport.pid,
    stderr: () => stderr,
    /** One call of the query tool; an `isError` result is thrown, with the server's text. */
    async query(sql, extra = {}) {
      const result = await client.callTool({ name: tool, arguments: { sql, ...extra } });
      if (result.isError) throw new Error(`${label}: ${result.content?.map((c) => c.text).join(' ')}`);
      return result;
    },
    close: forget,
  };
}

/** Opens `count` sessions, `parallel` at a time (spawning 50 node processes at once on 2 cores only measures the scheduler). */
export async function openSessions(count, parallel, open) {
  const sessions = [];
  try {
    for (let i = 0; i < count; i += parallel) {
      const batch = await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, (_, j) => open(i + j)));
      sessions.push(...batch);
    }
  } catch (err) {
    await Promise.all(sessions.map((s) => s.close()));
    throw err;
  }
  return sessions;
}
