import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../../daemon/engines/driver.js';
import { dropTables, makeDriver, openAdmin, READ, skipReason, uniqueName } from './mysql-env.js';

describe.skipIf(skipReason !== undefined)('MySQL driver: types to JSON', () => {
  const table = uniqueName('hanactl_types');
  let conn: DriverConnection;

  beforeAll(async () => {
    const admin = await openAdmin();
    await admin.query(`CREATE TABLE \`${table}\` (
      id INT PRIMARY KEY,
      n INT NULL,
      t TINYINT,
      i INT,
      iu INT UNSIGNED,
      bi BIGINT,
      bi_big BIGINT,
      bu BIGINT UNSIGNED,
      d DECIMAL(30,10),
      f DOUBLE,
      dt DATE,
      dtm DATETIME(3),
      ts TIMESTAMP(3) NULL,
      b BOOLEAN,
      bl BLOB,
      vb VARBINARY(16),
      txt VARCHAR(50) CHARACTER SET utf8mb4,
      lt TEXT,
      e ENUM('red','green'),
      tm TIME,
      j JSON
    )`);
    // The admin session writes TIMESTAMP in +05:00; the driver must read it back as true UTC.
    await admin.query("SET time_zone = '+05:00'");
    await admin.execute(
      `INSERT INTO \`${table}\` VALUES (1, NULL, -7, 123456, 4000000000, 42, 9007199254740993, 18446744073709551615,
        ?, 1.5, '2024-02-03', '2024-02-03 04:05:06.789', '2024-02-03 09:05:06.250', TRUE, x'00ff10', x'cafe', ?, 'long text',
        'green', '10:11:12', '{"a": [1, 2]}')`,
      ['12345678901234567890.1234567890', 'héllo 🎉 wörld'],
    );
    await admin.end();
    conn = await makeDriver().connect();
  });

  afterAll(async () => {
    await conn?.close();
    await dropTables(table);
  });

  it('renders every common type as lossless JSON', async () => {
    const r = await conn.execute(`SELECT * FROM \`${table}\``, [], READ);
    expect(r.rowCount).toBe(1);
    expect(r.truncated).toBe(false);
    expect(r.rows[0]).toEqual({
      id: 1,
      n: null,
      t: -7,
      i: 123456,
      iu: 4000000000,
      bi: 42, // safe BIGINT: a number
      bi_big: '9007199254740993', // beyond 2^53: the exact string
      bu: '18446744073709551615',
      d: '12345678901234567890.1234567890', // DECIMAL: exact string, never a float
      f: 1.5,
      dt: '2024-02-03',
      dtm: '2024-02-03T04:05:06.789Z', // DATETIME: as written, read as UTC
      ts: '2024-02-03T04:05:06.250Z', // TIMESTAMP: 09:05:06 at +05:00 is 04:05:06 UTC
      b: 1, // BOOLEAN is TINYINT(1) in MySQL: kept as the number stored
      bl: '\\x00ff10',
      vb: '\\xcafe',
      txt: 'héllo 🎉 wörld',
      lt: 'long text',
      e: 'green',
      tm: '10:11:12',
      j: { a: [1, 2] },
    });
    // JSON round trip is exact.
    expect(JSON.parse(JSON.stringify(r.rows))).toEqual(r.rows);
  });

  it('names column types readably', async () => {
    const r = await conn.execute(`SELECT * FROM \`${table}\``, [], READ);
    const types = Object.fromEntries(r.columns.map((c) => [c.name, c.type]));
    expect(types).toEqual({
      id: 'INT',
      n: 'INT',
      t: 'TINYINT',
      i: 'INT',
      iu: 'INT UNSIGNED',
      bi: 'BIGINT',
      bi_big: 'BIGINT',
      bu: 'BIGINT UNSIGNED',
      d: 'DECIMAL',
      f: 'DOUBLE',
      dt: 'DATE',
      dtm: 'DATETIME',
      ts: 'TIMESTAMP',
      b: 'TINYINT',
      bl: 'BLOB',
      vb: 'VARBINARY',
      txt: 'VARCHAR',
      lt: 'TEXT',
      e: 'ENUM',
      tm: 'TIME',
      j: 'JSON',
    });
  });

  it('keeps computed values exact too', async () => {
    const r = await conn.execute(
      'SELECT COUNT(*) AS c, CAST(? AS DECIMAL(30,10)) AS d, 2 * 9007199254740993 AS big, CAST(? AS SIGNED) AS neg, NULL AS nothing',
      // Integers beyond 2^53 travel as strings; a JS number would already have lost the last digit.
      ['0.1000000001', '-9007199254740993'],
      READ,
    );
    expect(r.rows[0]).toEqual({ c: 1, d: '0.1000000001', big: '18014398509481986', neg: '-9007199254740993', nothing: null });
  });
});
