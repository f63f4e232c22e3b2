import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim } from '../helpers/mcp-client.js';

interface Entry {
  env: Record<string, string>;
}

describe('mcp-config writes a placeholder for each declared context parameter', () => {
  const home = new TestHome();
  let shim: ShimHandle | undefined;

  beforeAll(async () => {
    await home.ok(['add', '--no-test', 'shop', 'sqlite::memory:']);
    await home.ok(['set', 'shop', '--context', 'CUSTOMER_ID,REGION']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  it('prints MCP_CONTEXT_<NAME> placeholders, says so, and the printed config works', async () => {
    const printed = await home.ok(['mcp-config', '--client', 'cursor', '--connection', 'shop']);
    const entry = (JSON.parse(printed.stdout) as { mcpServers: { hanactl: Entry } }).mcpServers.hanactl;
    expect(entry.env).toMatchObject({ MCP_CONTEXT_CUSTOMER_ID: 'REPLACE-WITH-CUSTOMER_ID', MCP_CONTEXT_REGION: 'REPLACE-WITH-REGION' });
    expect(printed.stderr).toMatch(/"shop" declares context parameters \(CUSTOMER_ID, REGION\).*replace each with this editor's value/);
    // The editor starts the shim with exactly that environment: calls run (scoped to the placeholder).
    shim = await startShim({ ...home.env, ...entry.env }, ['--connection', 'shop']);
    const result = await shim.call('run_query', { sql: "SELECT mcp_context('CUSTOMER_ID') AS c" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ c: 'REPLACE-WITH-CUSTOMER_ID' }] });
  });

  it('puts them in the file --write merges into, and in claude mcp add', async () => {
    const dir = join(home.dir, 'proj');
    mkdirSync(dir);
    const file = join(dir, 'mcp.json');
    const written = await home.ok(['mcp-config', '--client', 'vscode', '--connection', 'shop', '--write', '--config-file', file]);
    expect(written.stderr).toContain('MCP_CONTEXT_CUSTOMER_ID');
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { servers: { hanactl: Entry } };
    expect(saved.servers.hanactl.env.MCP_CONTEXT_REGION).toBe('REPLACE-WITH-REGION');
    const claude = await home.ok(['mcp-config', '--client', 'claude-code', '--connection', 'shop']);
    expect(claude.stdout).toContain('-e MCP_CONTEXT_CUSTOMER_ID=REPLACE-WITH-CUSTOMER_ID');
  });

  it('adds nothing for a connection without context parameters', async () => {
    await home.ok(['add', '--no-test', 'plain', 'sqlite::memory:']);
    const printed = await home.ok(['mcp-config', '--client', 'cursor', '--connection', 'plain']);
    expect(printed.stdout).not.toContain('MCP_CONTEXT_');
    expect(printed.stderr).not.toMatch(/context parameters|MCP_CONTEXT_/);
  });
});
