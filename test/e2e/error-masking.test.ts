import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const pgUp = await serverAvailable('postgres');
const mysqlUp = await serverAvailable('mysql');

const MD5 = `md5${'9dd4e461268c8034f5c8564e155c67a6'}`;

/** Statements whose error text carries a credential the server computed or read; none may reach the agent. */
const CASES: readonly (readonly [string, string, string, boolean])[] = [
  ['pg', 'a password hash in a cast error', "SELECT ('md5' || md5('x'))::int", pgUp],
  ['pg', 'a password in a cast error', "SELECT ('ALTER ROLE x PASSWORD ''hunt' || 'er2''')::int", pgUp],
  ['pg', 'a SCRAM verifier in a cast error', "SELECT ('SCRAM-SHA-256$4096:' || 'c2FsdA==$c3RvcmVk:c2VydmVy')::int", pgUp],
  ['my', 'a password in an XPATH error', "SELECT ExtractValue(1, CONCAT('~', 'password=hunt', 'er2'))", mysqlUp],
  ['lite', 'a password hash in an error', `SELECT * FROM "${MD5}"`, true],
];

describe('error texts are masked as cells are: no credential reaches the agent through a failure', () => {
  const home = new TestHome();
  let shim: ShimHandle;

  beforeAll(async () => {
    if (pgUp) await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    if (mysqlUp) await home.ok(['add', '--no-test', 'my', MYSQL_URL, '--no-password']);
    writeFileSync(join(home.dir, 'lite.db'), '');
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    shim = await startShim(home.env);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  for (const [connection, what, sql, up] of CASES)
    it.skipIf(!up)(`${connection}: ${what}`, async () => {
      const result = await shim.call('run_query', { sql, connection });
      const text = textOf(result);
      expect(result.isError, text).toBe(true);
      expect(text).toMatch(/^QUERY_FAILED: /);
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('9dd4e461268c8034f5c8564e155c67a6');
      expect(text).not.toContain('c3RvcmVk');
      expect(text).toMatch(/\*\*\*/);
    });
});
