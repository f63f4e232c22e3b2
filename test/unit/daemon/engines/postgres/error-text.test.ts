import { describe, expect, it } from 'vitest';
import type { ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { createPostgresDriver } from '../../../../../daemon/engines/postgres/index.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import type { HanactlError } from '../../../../../shared/errors.js';
import { PG_URL, serverAvailable } from '../../../../helpers/engines.js';

const available = await serverAvailable('postgres');
const READ: ExecuteOptions = { maxRows: 10, timeoutMs: 5_000, readOnly: true };

/** The error a statement fails with, on a connection that holds `password` (the test server trusts loopback). */
async function failure(password: string, sql: string): Promise<HanactlError> {
  const conn = await createPostgresDriver(parseConnectionUrl(PG_URL).target, { password }, { connectTimeoutMs: 3000 }).connect();
  try {
    return await conn.execute(sql, [], READ).then(
      () => expect.unreachable('the statement should fail') as never,
      (err: HanactlError) => err,
    );
  } finally {
    await conn.close();
  }
}

describe.skipIf(!available)("PostgreSQL: a statement's error does not depend on the connection's password", () => {
  it('quotes the right guess as it quotes a wrong one', async () => {
    const password = 'agentpw7-right';
    const right = await failure(password, "SELECT 'a-agentpw7-right-c'::int");
    const wrong = await failure(password, "SELECT 'a-agentpw6-wrong-c'::int");
    expect(right.code).toBe('QUERY_FAILED');
    expect(right.message).toBe('invalid input syntax for type integer: "a-agentpw7-right-c"');
    expect(right.message.replace('agentpw7-right', 'GUESS')).toBe(wrong.message.replace('agentpw6-wrong', 'GUESS'));
  });

  it('shows a one-letter password where it occurs, unmarked', async () => {
    const err = await failure('x', "SELECT 'execute nextval() in context'::int");
    expect(err.message).toBe('invalid input syntax for type integer: "execute nextval() in context"');
  });
});
