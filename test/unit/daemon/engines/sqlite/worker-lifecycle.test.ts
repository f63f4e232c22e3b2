import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteDriver } from '../../../../../daemon/engines/sqlite/index.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { childPids, processExists } from '../../../../helpers/processes.js';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);'));
afterAll(() => fx.cleanup());

const waitForExit = async (pid: number | undefined): Promise<void> => {
  for (let i = 0; i < 100 && processExists(pid); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('the worker process of a connection', () => {
  it('runs apart from the daemon', async () => {
    const conn = await fx.connect();
    expect(conn.pid).toBeTypeOf('number');
    expect(conn.pid).not.toBe(process.pid);
    expect(processExists(conn.pid)).toBe(true);
  });

  // The shared driver suite covers the failed call, broken, reset and close; what is SQLite's own is the code a ping gets.
  it('killed from outside: a ping fails with QUERY_FAILED naming the worker, as calls do', async () => {
    const conn = await fx.connect();
    process.kill(conn.pid!, 'SIGKILL');
    await expect(conn.ping()).rejects.toMatchObject({ code: 'QUERY_FAILED', message: expect.stringMatching(/SQLite worker process/) });
    expect(conn.broken).toBe(true);
  });

  it('killed while idle: broken as soon as the exit is seen, and the message names how it ended', async () => {
    const conn = await fx.connect();
    process.kill(conn.pid!, 'SIGKILL');
    await waitForExit(conn.pid);
    await new Promise((r) => setTimeout(r, 20));
    expect(conn.broken).toBe(true);
    await expect(conn.execute('SELECT 1', [], READ)).rejects.toThrow(/The SQLite worker process exited \(signal SIGKILL\)/);
  });
});

describe('connecting', () => {
  it('refuses a missing file with CONNECT_FAILED naming the path, starting no worker', async () => {
    const missing = `${fx.dir}/missing.db`;
    const driver = createSqliteDriver(parseConnectionUrl(`sqlite:${missing}`).target, {}, { connectTimeoutMs: 1_000 });
    await expect(driver.connect()).rejects.toMatchObject({ code: 'CONNECT_FAILED', message: expect.stringContaining(missing) });
  });

  it('refuses an unknown URL option with INVALID_URL', () => {
    expect(() => createSqliteDriver(parseConnectionUrl(`sqlite:${fx.file}?cache=shared`).target, {}, { connectTimeoutMs: 1_000 })).toThrow(
      expect.objectContaining({ code: 'INVALID_URL' }),
    );
  });

  it('refuses a file that is not a database with CONNECT_FAILED, leaving no worker', async () => {
    const junk = `${fx.dir}/junk.db`;
    writeFileSync(junk, 'this is not a database file at all, just some text padding it out'.repeat(20));
    const driver = createSqliteDriver(parseConnectionUrl(`sqlite:${junk}`).target, {}, { connectTimeoutMs: 5_000 });
    const before = childPids();
    await expect(driver.connect()).rejects.toMatchObject({
      code: 'CONNECT_FAILED',
      message: `Cannot open the SQLite file ${junk}: file is not a database`,
    });
    expect(childPids()).toEqual(before);
  });

  it('opens :memory: databases, one per connection', async () => {
    const driver = createSqliteDriver(parseConnectionUrl('sqlite::memory:').target, {}, { connectTimeoutMs: 5_000 });
    const a = await driver.connect();
    const b = await driver.connect();
    try {
      await a.execute('CREATE TABLE only_a (n)', [], { ...READ, readOnly: false });
      await expect(a.execute('SELECT count(*) AS c FROM only_a', [], READ)).resolves.toMatchObject({ rows: [{ c: 0 }] });
      await expect(b.execute('SELECT count(*) AS c FROM only_a', [], READ)).rejects.toMatchObject({ code: 'QUERY_FAILED' });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
