import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { processExists, processRunning } from '../../../../helpers/processes.js';
import { RUNAWAY, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER);'));
afterAll(() => fx.cleanup());

/** The built driver: a stand-in daemon must run plain Node, so it imports `dist/`. */
const BUILT_DRIVER = fileURLToPath(new URL('../../../../../dist/daemon/engines/sqlite/index.js', import.meta.url));

/** The built host process, to start a host with the watchdog thread instead of the kernel's signal. */
const BUILT_HOST_PROCESS = fileURLToPath(new URL('../../../../../dist/daemon/engines/sqlite/sqlite-host-process.js', import.meta.url));
const BUILT_LAUNCH = fileURLToPath(new URL('../../../../../dist/daemon/engines/sqlite/sqlite-host-launch.js', import.meta.url));

/** A stand-in daemon whose host watches its parent with a thread (as where `setpriv` is missing). */
const DAEMON_THREAD_WATCH = `
const { SqliteHostProcess } = await import(process.env.HOST_PROCESS);
const { hostLaunch } = await import(process.env.LAUNCH);
const host = new SqliteHostProcess(hostLaunch(process.env, 'thread'));
const limits = { timeoutMs: 600000, timeoutError: () => new Error('timeout') };
await host.request({ op: 'open', path: process.env.DB, readonly: false }, limits);
process.stdout.write(String(host.pid) + '\\n');
await host.request({ op: 'execute', sql: process.env.SQL, params: [], maxRows: 1, readOnly: true, context: {} }, limits);
`;

/** A stand-in daemon: opens a connection, prints its worker's pid, then starts a runaway statement. */
const DAEMON = `
const { createSqliteDriver } = await import(process.env.DRIVER);
const driver = createSqliteDriver({ engine: 'sqlite', path: process.env.DB, options: {} }, {}, { connectTimeoutMs: 5000 });
const conn = await driver.connect();
process.stdout.write(String(conn.pid) + '\\n');
await conn.execute(process.env.SQL, [], { maxRows: 1, timeoutMs: 600000, readOnly: true });
`;

describe('a worker whose daemon died', () => {
  it.each([
    ['the way the driver starts it', DAEMON],
    ['watched by a thread', DAEMON_THREAD_WATCH],
  ])('exits even while it is stuck in a statement (%s)', async (_how, source) => {
    const daemon = spawn(process.execPath, ['--input-type=module', '-e', source], {
      env: { ...process.env, DRIVER: BUILT_DRIVER, HOST_PROCESS: BUILT_HOST_PROCESS, LAUNCH: BUILT_LAUNCH, DB: fx.file, SQL: RUNAWAY },
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
