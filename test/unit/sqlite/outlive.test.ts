import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { processExists, processRunning, RUNAWAY, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER);'));
afterAll(() => fx.cleanup());

/** The built driver: a stand-in daemon must run plain Node, so it imports `dist/`. */
const BUILT_DRIVER = fileURLToPath(new URL('../../../dist/daemon/drivers/sqlite/index.js', import.meta.url));

/** A stand-in daemon: opens a connection, prints its worker's pid, then starts a runaway statement. */
const DAEMON = `
const { createSqliteDriver } = await import(process.env.DRIVER);
const driver = createSqliteDriver({ engine: 'sqlite', path: process.env.DB, options: {} }, {}, { connectTimeoutMs: 5000 });
const conn = await driver.connect();
process.stdout.write(String(conn.pid) + '\\n');
await conn.execute(process.env.SQL, [], { maxRows: 1, timeoutMs: 600000, readOnly: true });
`;

describe('a worker whose daemon died', () => {
  it('exits even while it is stuck in a statement', async () => {
    const daemon = spawn(process.execPath, ['--input-type=module', '-e', DAEMON], {
      env: { ...process.env, DRIVER: BUILT_DRIVER, DB: fx.file, SQL: RUNAWAY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(daemon.stdout, 'data')) as [Buffer];
    const workerPid = Number(line.toString().trim());
    expect(processExists(workerPid)).toBe(true);
    await new Promise((r) => setTimeout(r, 200)); // the worker is now inside sqlite3_step
    daemon.kill('SIGKILL');
    await once(daemon, 'exit');
    const deadline = Date.now() + 3_000;
    while (processRunning(workerPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(processRunning(workerPid)).toBe(false);
  });
});
