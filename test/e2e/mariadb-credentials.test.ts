import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');

/** No password hash of the connection's user (or any other) reaches a tool result on MariaDB. */
describe.skipIf(!available)('MariaDB credentials stay out of tool results', () => {
  const home = new TestHome();
  let shim: ShimHandle;

  beforeAll(async () => {
    await home.ok(['add', '--no-test', '--no-password', 'maria', MYSQL_URL]);
    shim = await startShim(home.env, ['--connection', 'maria']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  it('refuses SHOW GRANTS, SHOW CREATE USER and mysql.user with the reason', async () => {
    for (const sql of ['SHOW GRANTS', 'SHOW CREATE USER CURRENT_USER', 'SELECT User, Password, authentication_string FROM mysql.user']) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result), sql).toMatch(/authentication data \(password hashes or stored passwords\)/);
    }
  });

  it('masks text shaped like a password hash or an IDENTIFIED clause in result cells', async () => {
    const sql = `SELECT PASSWORD('secret') AS h,
      CONCAT('GRANT USAGE ON *.* TO a@b IDENTIFIED BY PASSWORD ''', PASSWORD('secret'), '''') AS g,
      'CREATE USER a@b IDENTIFIED VIA ed25519 USING ''ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY'' OR unix_socket' AS v,
      'plain text' AS t`;
    const result = await shim.call('run_query', { sql });
    expect(result.isError).toBeFalsy();
    const text = JSON.stringify(result);
    expect(text).not.toMatch(/14E65567ABDB5135D0CFD9A70B3032C179A49EE7/i);
    expect(text).not.toContain('ZIgUREUg5PVgQ6LskhXmO');
    expect(result.structuredContent).toMatchObject({
      rows: [
        {
          h: '*** (password hash hidden)',
          g: "GRANT USAGE ON *.* TO a@b IDENTIFIED BY PASSWORD '***'",
          v: "CREATE USER a@b IDENTIFIED VIA ed25519 USING '***' OR unix_socket",
          t: 'plain text',
        },
      ],
    });
  });
});
