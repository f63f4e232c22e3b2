import { describe, it } from 'vitest';
import type { DriverConnection } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { runDriverConformance } from './conformance.js';

const url = process.env.HANA_TEST_URL;

if (!url) {
  console.warn('Live SAP HANA conformance skipped: HANA_TEST_URL is unset (hana://user:password@host:port/tenant?encrypt=true runs it).');
  describe('driver conformance: hana', () => {
    it.skip('needs a live SAP HANA server (HANA_TEST_URL)', () => {});
  });
} else {
  let admin: DriverConnection | undefined;
  const adminConn = async () => {
    if (admin && !admin.broken) return admin;
    const { target, password } = parseConnectionUrl(url);
    const factory = await loadDriverFactory('hana');
    admin = await factory(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 10_000 }).connect();
    return admin;
  };
  const adminRead = async (sql: string, params: (string | number)[] = []) =>
    (await adminConn()).execute(sql, params, { maxRows: 10, timeoutMs: 10_000, readOnly: true });

  runDriverConformance({
    name: 'hana',
    url,
    placeholder: () => 'TO_NVARCHAR(?)',
    selectRow: (list) => `SELECT ${list} FROM DUMMY`,
    series: (n) => `SELECT ELEMENT_NUMBER AS "n" FROM SERIES_GENERATE_INTEGER(1, 0, ${n})`,
    sleep: (_s, m) => `SELECT COUNT(*) AS "${m}" FROM SYS.OBJECTS A, SYS.OBJECTS B, SYS.OBJECTS C`,
    typesTable: (t) => ({
      setup: [
        `CREATE COLUMN TABLE "${t}" ("i" INTEGER, "big" BIGINT, "dec" DECIMAL(30,10), "b" BOOLEAN, "d" DATE, "txt" NVARCHAR(50), "bin" VARBINARY(4), "nul" NVARCHAR(5))`,
        `INSERT INTO "${t}" VALUES (42, 9223372036854775807, 12345678901234567890.0123456789, TRUE, '2024-02-29', 'grüße 🐘', X'00FF', NULL)`,
      ],
      select: `SELECT * FROM "${t}"`,
      expected: {
        i: 42,
        big: '9223372036854775807',
        dec: '12345678901234567890.0123456789',
        b: true,
        d: '2024-02-29',
        txt: 'grüße 🐘',
        bin: '\\x00ff',
        nul: null,
      },
      teardown: `DROP TABLE "${t}"`,
    }),
    tempTable: (name) => ({ create: `CREATE LOCAL TEMPORARY TABLE "#${name}" ("n" INTEGER)`, name: `"#${name}"` }),
    version: /^\d+\.\d+/,
    readOnlyRefusal: { code: 'QUERY_FAILED' },
    // A statement HANA cannot stop within the grace gives its connection up; a quick abort keeps it.
    statementsRunning: async (m) =>
      Number(
        Object.values(
          (
            await adminRead(
              `SELECT COUNT(*) AS "n" FROM SYS.M_ACTIVE_STATEMENTS WHERE STATEMENT_STRING LIKE ? AND STATEMENT_STATUS = 'ACTIVE'`,
              [`%${m}%`],
            )
          ).rows[0] ?? {},
        )[0],
      ),
    sessionKiller: async (conn) => {
      const id = Number(
        Object.values(
          (await conn.execute('SELECT CURRENT_CONNECTION AS "id" FROM DUMMY', [], { maxRows: 1, timeoutMs: 10_000, readOnly: true }))
            .rows[0] ?? {},
        )[0],
      );
      return async () => {
        await (await adminConn()).execute(`ALTER SYSTEM DISCONNECT SESSION '${id}'`, [], {
          maxRows: 1,
          timeoutMs: 10_000,
          readOnly: false,
        });
        const deadline = Date.now() + 5000;
        const alive = async () =>
          Number(
            Object.values(
              (
                await adminRead(
                  `SELECT COUNT(*) AS "n" FROM SYS.M_CONNECTIONS WHERE CONNECTION_ID = ? AND CONNECTION_STATUS IN ('RUNNING', 'IDLE')`,
                  [id],
                )
              ).rows[0] ?? {},
            )[0],
          ) > 0;
        while ((await alive()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      };
    },
    skip: {
      'endless-result-capped': 'no HANA statement here is known to stream rows without end; the row cap is tested on 100,000 rows',
    },
    cleanup: async () => {
      await admin?.close();
    },
  });
}
