import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import { postgresContextSql, signatureSetting } from '../../../../daemon/engines/postgres/postgres-signed-context.js';
import { contextKeyId, newContextKey, signContextValue } from '../../../../daemon/engines/signed-context.js';

it('signs "<pid>:<name>=<value>" with HMAC-SHA256, the key named by its id', () => {
  const key = newContextKey();
  const sig = signContextValue(key, 4242, 'CUSTOMER_ID', 'C-1 ü');
  const mac = createHmac('sha256', key).update('4242:customer_id=C-1 ü', 'utf8').digest('hex');
  expect(sig).toBe(`v1.${contextKeyId(key)}.${mac}`);
  expect(signContextValue(key, 4243, 'CUSTOMER_ID', 'C-1 ü')).not.toBe(sig);
  expect(signatureSetting('CUSTOMER_ID')).toBe('mcp.customer_id.sig');
});

it('puts only plain identifiers into the install SQL, lower-cased as PostgreSQL folds them', () => {
  const key = newContextKey();
  const sql = postgresContextSql({ key, role: 'Agent_1', schema: 'ctx' });
  expect(sql).toContain('GRANT EXECUTE ON FUNCTION ctx.context(text) TO agent_1;');
  for (const role of ['agent; DROP TABLE x', 'a"b', '1abc', 'x'.repeat(64)]) {
    expect(() => postgresContextSql({ key, role })).toThrow(/not a plain PostgreSQL identifier/);
  }
  expect(() => postgresContextSql({ key, role: 'a', schema: 'pg catalog' })).toThrow(/schema "pg catalog"/);
});
