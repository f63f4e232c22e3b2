import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const pgUp = await serverAvailable('postgres');
const mysqlUp = await serverAvailable('mysql');

/** 100 rows of one 10 MB cell each, three calls at once: 3 GB if every row were read. */
const WIDE: Record<string, string> = {
  pg: "SELECT repeat('x', 10000000) AS a FROM generate_series(1, 100)",
  my: "SELECT repeat('x', 10000000) AS a FROM seq_1_to_100",
  lite: "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 100) SELECT replace(hex(zeroblob(5000000)), '0', 'x') AS a FROM g",
};

/** The daemon's peak resident memory so far, in MB (Linux: VmHWM). */
function daemonPeakMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

describe.skipIf(process.platform !== 'linux')('a wide result is not read whole: rows stop at the result cap', () => {
  const home = new TestHome();
  let shim: ShimHandle;

  beforeAll(async () => {
    // Three calls at once: above the per-session limit of the default pool, so no call waits.
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ perSession: { maxConcurrentCalls: 3 } }));
    if (pgUp) await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    if (mysqlUp) await home.ok(['add', '--no-test', 'my', MYSQL_URL, '--no-password']);
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'wide.db')}`]);
    writeFileSync(join(home.dir, 'wide.db'), '');
    shim = await startShim(home.env);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  const engines = [
    ['pg', pgUp],
    ['my', mysqlUp],
    ['lite', true],
  ] as const;

  for (const [connection, up] of engines)
    it.skipIf(!up)(
      `${connection}: three calls of 100 rows of 10 MB each answer cut, and the daemon stays under 500 MB`,
      async () => {
        const results = await Promise.all(Array.from({ length: 3 }, () => shim.call('run_query', { sql: WIDE[connection], connection })));
        for (const result of results) {
          expect(result.isError, textOf(result)).toBeFalsy();
          expect(result.structuredContent).toMatchObject({ truncated: true });
          // Rows stop once those kept hold 32 MB as read: 4 of the 100, cut to fit.
          expect((result.structuredContent as { rowCount: number }).rowCount).toBeLessThanOrEqual(4);
          expect(textOf(result)).toContain('Cut to fit 64 KiB per result');
        }
        const { pid } = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
        expect(daemonPeakMb(pid)).toBeLessThan(500);
      },
      120_000,
    );
});
