import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { plantedVerifiers } from '../helpers/planted-verifiers.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_toast_${process.pid}`;
const ROLES = 25;

/** The reading of pg_statistic's storage table that finds a SCRAM verifier among its chunks. */
const SCRAM_CHUNK = `select encode(substr(chunk_data, position('SCRAM-SHA-256'::bytea in chunk_data), 140), 'hex') as h
  from pg_toast.pg_toast_2619 where position('SCRAM-SHA-256'::bytea in chunk_data) > 0 limit 1`;

/**
 * A storage (TOAST) table holds another relation's out-of-line values; after ANALYZE pg_authid
 * with enough password roles, pg_statistic's (pg_toast_2619) holds the histogram of rolpassword,
 * verifiers in clear among its chunks. On a superuser connection marked read-only, none is read:
 * not by name, not through a view or a function body that names it.
 */
describe.skipIf(!available)('PostgreSQL storage (TOAST) tables on a read-only superuser connection', () => {
  let userToast = '';
  const { shim, verifiers } = plantedVerifiers(TAG, ROLES, async (db) => {
    await db.query('ANALYZE pg_catalog.pg_authid');
    // The test reads what the review read: the chunk is there to be refused.
    const found = await db.query(SCRAM_CHUNK);
    expect(found.rows).toHaveLength(1);
    await db.query('CREATE VIEW public.toast_view AS SELECT chunk_id, chunk_seq, chunk_data FROM pg_toast.pg_toast_2619');
    await db.query(
      "CREATE FUNCTION public.toast_chunks() RETURNS SETOF bytea LANGUAGE sql AS 'SELECT chunk_data FROM pg_toast.pg_toast_2619'",
    );
    await db.query('CREATE TABLE public.big(id int, body text)');
    await db.query("INSERT INTO public.big SELECT 1, string_agg(md5(i::text), '') FROM generate_series(1, 400) i");
    const toast = await db.query("SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE oid = 'public.big'::regclass");
    userToast = String(toast.rows[0].t);
    expect(userToast).toMatch(/^pg_toast\.pg_toast_\d+$/);
    await db.query(`CREATE VIEW public.big_chunks AS SELECT chunk_data FROM ${userToast}`);
  });
  /** The key material of each planted verifier, and its hex form (what must never show). */
  const secrets = (): string[] => verifiers.flatMap((key) => [key.slice(0, 20), Buffer.from(key.slice(0, 20)).toString('hex')]);

  /** The whole result as a client receives it holds no verifier, in clear or hex. */
  const noSecret = (result: unknown) => {
    const all = JSON.stringify(result);
    for (const s of secrets()) expect(all).not.toContain(s);
    expect(all).not.toMatch(/SCRAM-SHA-256\$\d+:|534352414d2d5348412d323536/i);
  };

  it('refuses the reading of pg_statistic’s storage table, in run_query and explain_query', async () => {
    for (const tool of ['run_query', 'explain_query']) {
      const result = await shim.call(tool, { sql: SCRAM_CHUNK });
      expect(result.isError, tool).toBe(true);
      expect(textOf(result)).toMatch(/^STATEMENT_REFUSED: Refused: pg_toast(_2619)? stores the out-of-line values of another relation/);
      noSecret(result);
    }
  });

  it.each(['pg_toast_1260', 'pg_toast_6100', 'pg_toast_1418', 'pg_toast_3429'])('refuses pg_toast.%s by name', async (table) => {
    const result = await shim.call('run_query', { sql: `SELECT * FROM pg_toast.${table}` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Refused: pg_toast(_\d+)? stores the out-of-line values/);
  });

  it('refuses a view or a function body over a storage table, naming the relation it serves', async () => {
    for (const [sql, says] of [
      [
        "SELECT encode(chunk_data, 'escape') AS d FROM toast_view",
        /Refused: (public\.)?toast_view reads pg_toast_2619, which stores the out-of-line values of pg_statistic/,
      ],
      ['SELECT toast_chunks()', /Refused: toast_chunks\(\) reads pg_toast_2619, which stores the out-of-line values of pg_statistic/],
      ['SELECT * FROM big_chunks', /Refused: (public\.)?big_chunks reads pg_toast_\d+, which stores the out-of-line values of big/],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result), sql).toMatch(says);
      noSecret(result);
    }
    const sample = await shim.call('sample_rows', { table: 'toast_view', schema: 'public' });
    expect(sample.isError).toBe(true);
    expect(textOf(sample)).toMatch(/stores the out-of-line values of pg_statistic/);
    noSecret(sample);
  });

  it('a plain table with large (stored out of line) values still answers', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT id, length(body) AS n, left(body, 8) AS head FROM big' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ id: 1, n: 12800, head: 'c4ca4238' }] });
    const sample = await shim.call('sample_rows', { table: 'big' });
    expect(sample.isError, textOf(sample)).toBeFalsy();
  });
});
