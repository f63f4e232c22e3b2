import mysql from 'mysql2/promise';
import { expect } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { runDriverConformance } from './conformance.js';

const available = await serverAvailable('mysql');

if (available) {
  const u = new URL(MYSQL_URL);
  const admin = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    database: u.pathname.slice(1),
  });
  runDriverConformance({
    name: 'mariadb',
    url: MYSQL_URL,
    placeholder: () => '?',
    quote: (name) => `\`${name.replaceAll('`', '``')}\``,
    series: (n) => `SELECT seq AS n FROM seq_1_to_${n}`,
    endless: 'SELECT a.seq AS n FROM seq_1_to_100000 a CROSS JOIN seq_1_to_100000 b',
    sleep: (s, m) => `SELECT SLEEP(${s}) AS ${m}`,
    typesTable: (t) => ({
      setup: [
        `CREATE TABLE ${t} (i INT, big BIGINT, huge BIGINT, dec_ DECIMAL(30,10), f DOUBLE, d DATE, ts DATETIME, bin VARBINARY(4), txt VARCHAR(50) CHARACTER SET utf8mb4, nul VARCHAR(5))`,
        `INSERT INTO ${t} VALUES (42, 9007199254740991, 9223372036854775807, 12345678901234567890.0123456789, 1.5, '2024-02-29', '2024-05-01 10:00:00', X'00FF', 'grüße 🐬', NULL)`,
      ],
      select: `SELECT * FROM ${t}`,
      expected: {
        i: 42,
        big: 9007199254740991,
        huge: '9223372036854775807',
        dec_: '12345678901234567890.0123456789',
        f: 1.5,
        d: '2024-02-29',
        ts: '2024-05-01T10:00:00.000Z',
        bin: '\\x00ff',
        txt: 'grüße 🐬',
        nul: null,
      },
      teardown: `DROP TABLE IF EXISTS ${t}`,
    }),
    tempTable: (name) => ({ create: `CREATE TEMPORARY TABLE ${name} (n INT)`, name }),
    version: /^\d+\.\d+\.\d+/,
    readOnlyRefusal: { code: 'QUERY_FAILED', details: { nativeCode: 1792, sqlState: '25006', hint: expect.stringMatching(/read-only/) } },
    missingTable: { details: { sqlState: '42S02', nativeCode: 1146 } },
    twoStatements: { details: { sqlState: '42000', nativeCode: 1064 } },
    stopKeepsConnection: true,
    statementsRunning: async (m) => {
      const [rows] = await admin.query(
        `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID() AND COMMAND = 'Query'`,
        [`%${m}%`],
      );
      return Number((rows as { n: number }[])[0]?.n ?? 0);
    },
    sessionKiller: async (conn) => {
      const id = Number(
        (await conn.execute('SELECT CONNECTION_ID() AS id', [], { maxRows: 1, timeoutMs: 5000, readOnly: true })).rows[0]?.id,
      );
      return async () => {
        await admin.query(`KILL ${id}`);
        // KILL only marks the thread: wait until the server has ended it.
        const deadline = Date.now() + 5000;
        const alive = async () => {
          const [rows] = await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
          return Number((rows as { n: number }[])[0]?.n ?? 0) > 0;
        };
        while ((await alive()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      };
    },
    lost: { code: 'CONNECT_FAILED', message: expect.stringContaining(`${u.hostname}:${u.port || 3306}`) },
    cleanup: () => admin.end(),
  });
}
