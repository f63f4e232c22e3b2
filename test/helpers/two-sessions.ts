import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach } from 'vitest';
import { TestHome } from './hanactl-home.js';
import { type ShimHandle, startShim } from './mcp-client.js';

/** Two agents' sessions on one connection, for a test of how one session's calls bear on the other's. */
export interface TwoSessions {
  /**
   * A home of the test's own whose config.json is `config`, the connection `register` adds (it
   * returns its name), and a shim on it for each agent: `a` (flooding-agent) and `b` (other-agent).
   */
  open(config: object, register: (home: TestHome) => Promise<string>): Promise<{ home: TestHome; a: ShimHandle; b: ShimHandle }>;
  /** Starts `sql` through `run_query` on `shim` without waiting for it (two minutes at most). */
  slowCall(shim: ShimHandle, sql: string): Promise<CallToolResult>;
}

/** For each test of the suite around the call; after each, its slow calls are aborted, its shims closed and its home removed. */
export function twoSessionsPerTest(): TwoSessions {
  let home: TestHome | undefined;
  const shims: ShimHandle[] = [];
  const aborts: AbortController[] = [];

  afterEach(async () => {
    for (const a of aborts.splice(0)) a.abort();
    for (const s of shims.splice(0)) await s.close().catch(() => {});
    await home?.dispose();
    home = undefined;
  });

  return {
    async open(config, register) {
      const made = new TestHome();
      home = made;
      writeFileSync(join(made.dir, 'config.json'), JSON.stringify(config));
      const connection = await register(made);
      const a = await startShim(made.env, ['--connection', connection], 'flooding-agent');
      const b = await startShim(made.env, ['--connection', connection], 'other-agent');
      shims.push(a, b);
      return { home: made, a, b };
    },
    slowCall(shim, sql) {
      const abort = new AbortController();
      aborts.push(abort);
      return shim.client.callTool({ name: 'run_query', arguments: { sql } }, undefined, {
        signal: abort.signal,
        timeout: 120_000,
      }) as Promise<CallToolResult>;
    },
  };
}
