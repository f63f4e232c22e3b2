import { createServer, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planMysqlUrl } from '../../../../../daemon/engines/mysql/index.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { HanactlError } from '../../../../../shared/errors.js';
import { closedPort } from '../../../../helpers/ports.js';
import {
  failure,
  MYSQL_PASSWORD,
  MYSQL_URL,
  makeDriver,
  openAdmin,
  READ,
  skipReason,
  TARGET,
  uniqueName,
  urlForUser,
} from './mysql-env.js';

describe('MySQL URL options (no server needed)', () => {
  const plan = (url: string) => planMysqlUrl(parseConnectionUrl(url).target);

  it('refuses an unknown option by name', () => {
    expect(() => plan('mysql://u@h/db?charset=latin1')).toThrow(/"charset"/);
    expect(() => plan('mysql://u@h/db?frobnicate=1')).toThrow(
      expect.objectContaining({ code: 'INVALID_URL', message: expect.stringContaining('"frobnicate"') }),
    );
  });

  it('maps ssl and sslmode spellings to one TLS mode', () => {
    expect(plan('mysql://u@h/db').tls).toBe('disable');
    expect(plan('mysql://u@h/db?ssl=true').tls).toBe('verify-full');
    expect(plan('mysql://u@h/db?ssl=false').tls).toBe('disable');
    expect(plan('mysql://u@h/db?sslmode=REQUIRED').tls).toBe('require');
    expect(plan('mariadb://u@h/db?ssl-mode=VERIFY_IDENTITY').tls).toBe('verify-full');
    expect(plan('mysql://u@h/db?sslmode=verify-ca&sslca=/tmp/ca.pem').caFile).toBe('/tmp/ca.pem');
    expect(plan('mysql://u@h/db?sslca=/tmp/ca.pem').tls).toBe('verify-full');
  });

  it('refuses TLS settings it cannot honour', () => {
    expect(() => plan('mysql://u@h/db?sslmode=prefer')).toThrow(/cannot fall back/);
    expect(() => plan('mysql://u@h/db?sslmode=sometimes')).toThrow(/not a known TLS mode/);
    expect(() => plan('mysql://u@h/db?ssl=true&sslmode=require')).toThrow(/not both/);
    expect(() => plan('mysql://u@h/db?sslmode=disable&sslca=/x')).toThrow(/turns TLS off/);
    expect(() => plan('mysql://u@h/db?sslcert=/x')).toThrow(/both "sslcert" and "sslkey"/);
  });

  it('fails when the driver is built, before any connection', () => {
    expect(() => makeDriver('mysql://u@127.0.0.1:1/db?bogus=1')).toThrow(HanactlError);
  });
});

describe('closed port (no server needed)', () => {
  it('fails fast with CONNECT_FAILED naming host:port', async () => {
    const port = await closedPort();
    const started = Date.now();
    const err = await failure(makeDriver(`mysql://root@127.0.0.1:${port}/test`, 'irrelevant-pw').connect());
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toMatch(/refused.*Check that the server is running/);
    expect(err.message).not.toContain('irrelevant-pw');
  });
});

describe('silent server (no MySQL needed)', () => {
  it('gives up after connectTimeoutMs with CONNECT_FAILED naming host:port', async () => {
    // Accepts TCP but never sends the MySQL greeting.
    const sockets: Socket[] = [];
    const server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const started = Date.now();
      const driver = makeDriver(`mysql://root@127.0.0.1:${port}/test`, undefined, { connectTimeoutMs: 300 });
      const err = await failure(driver.connect());
      expect(Date.now() - started).toBeLessThan(1500);
      expect(err.code).toBe('CONNECT_FAILED');
      expect(err.message).toContain(`127.0.0.1:${port}`);
      expect(err.message).toMatch(/no answer within 300 ms/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe.skipIf(skipReason !== undefined)('MySQL driver: connecting', () => {
  const user = uniqueName('hanactl_conn');
  // A password no message may ever show; a suffix makes it unique per run.
  const planted = `Pl4nted-${uniqueName('pw')}`;

  beforeAll(async () => {
    const admin = await openAdmin();
    await admin.query(`CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY '${planted}'`);
    await admin.query(`GRANT SELECT ON \`${TARGET.database}\`.* TO '${user}'@'%'`);
    await admin.end();
  });

  afterAll(async () => {
    const admin = await openAdmin();
    await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
    await admin.end();
  });

  it('connects, pings and reports the server version', async () => {
    const driver = makeDriver();
    expect(driver.engine).toBe('mysql');
    const conn = await driver.connect();
    try {
      expect(conn.broken).toBe(false);
      await conn.ping();
      expect(await conn.serverVersion()).toMatch(/^\d+\.\d+\.\d+/);
      const r = await conn.execute('SELECT VERSION() AS v', [], READ);
      expect(r.rows[0]?.v).toBe(await conn.serverVersion());
    } finally {
      await conn.close();
    }
    await conn.close(); // a second close is harmless
    await expect(conn.execute('SELECT 1', [], READ)).rejects.toThrow(/closed/);
  });

  it('accepts mariadb:// as the same engine', async () => {
    const conn = await makeDriver(MYSQL_URL.replace(/^mysql:/, 'mariadb:')).connect();
    try {
      expect((await conn.execute('SELECT 1 AS one', [], READ)).rows).toEqual([{ one: 1 }]);
    } finally {
      await conn.close();
    }
  });

  it('connects a user with a password: errors quote the statement as written, nothing kept shows the password', async () => {
    const driver = makeDriver(urlForUser(user), planted);
    const conn = await driver.connect();
    try {
      // The statement's text is the agent's: a server message quoting it reads the same whether
      // it holds the password or a wrong guess, or the answer would confirm the guess.
      const wrong = `Pl4nted-${uniqueName('pw')}`;
      const err = await failure(conn.execute(`SELECT * FROM \`${planted}\``, [], READ));
      const other = await failure(conn.execute(`SELECT * FROM \`${wrong}\``, [], READ));
      expect(err.code).toBe('QUERY_FAILED');
      expect(err.details.nativeCode).toBe(1146);
      expect(err.details.sqlState).toBe('42S02');
      expect(err.message).toContain(planted);
      expect(err.message.replace(planted, 'GUESS')).toBe(other.message.replace(wrong, 'GUESS'));
      expect(conn.broken).toBe(false);
      // Nothing kept is enumerable or inspectable with the password in it.
      for (const thing of [driver, conn]) {
        expect(JSON.stringify(thing) ?? '').not.toContain(planted);
        expect(inspect(thing, { showHidden: true, depth: 8 })).not.toContain(planted);
      }
    } finally {
      await conn.close();
    }
  });

  it('fails a wrong password with CONNECT_FAILED, naming host:port but no password', async () => {
    const wrong = `Wr0ng-${uniqueName('pw')}`;
    const err = await failure(makeDriver(urlForUser(user), wrong).connect());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.details.nativeCode).toBe(1045);
    expect(err.message).toContain(`${TARGET.host}:${TARGET.port}`);
    expect(err.message).toMatch(/access denied/i);
    expect(err.message).not.toContain(wrong);
    expect(err.message).not.toContain(planted);
  });

  it('fails an unknown database with a sentence naming it', async () => {
    const db = uniqueName('no_such_db');
    const url = new URL(MYSQL_URL);
    url.pathname = `/${db}`;
    const err = await failure(makeDriver(url.toString(), MYSQL_PASSWORD).connect());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain(db);
  });

  it('reports TLS required by the URL but not offered by the server', async (ctx) => {
    const admin = await openAdmin();
    const [rows] = await admin.query("SHOW VARIABLES LIKE 'have_ssl'");
    await admin.end();
    if ((rows as { Value: string }[])[0]?.Value === 'YES') ctx.skip();
    const err = await failure(makeDriver(`${MYSQL_URL}?sslmode=require`).connect());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toMatch(/TLS/);
  });
});
