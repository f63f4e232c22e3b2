/**
 * A person's cast between two built-in types (made by a superuser), which the server runs for a
 * cast to a domain over the target type, an array of that domain or a domain over the target's
 * array (find_coercion_pathway looks a domain's cast up by its base type, an array's by its
 * element type): through the real shim and daemon, on a connection that separates rows by a
 * context value. The cast function is SECURITY DEFINER and reads every customer's orders; it
 * never runs, and no other customer's item comes back, while the same statements answer once the
 * person's casts are gone.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
// Creating and dropping a database waits for every session of the server to take a barrier.
vi.setConfig({ hookTimeout: 300_000 });
const TAG = `fix_domaincasts_e2e_${process.pid}`;
const AGENT = `${TAG}_agent`;
const PASSWORD = randomBytes(12).toString('hex');

const OBJECTS = [
  'CREATE TABLE public.orders (id int, customer_id int, item text)',
  "INSERT INTO public.orders VALUES (1, 1, 'item-of-1'), (2, 1, 'item-of-1b'), (3, 2, 'item-of-2'), (4, 2, 'item-of-2b')",
  'ALTER TABLE public.orders ENABLE ROW LEVEL SECURITY',
  "CREATE POLICY mine ON public.orders USING (customer_id = pg_catalog.current_setting('mcp.customer_id', true)::int)",
  'CREATE FUNCTION public.label(int) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER AS $$ SELECT item FROM public.orders WHERE id = $1 $$',
  'CREATE CAST (int4 AS text) WITH FUNCTION public.label(int)',
  'CREATE DOMAIN public.td AS text',
  'CREATE DOMAIN public.tda AS text[]',
  "CREATE FUNCTION public.price(bool) RETURNS money LANGUAGE sql STABLE SECURITY DEFINER AS $$ SELECT pg_catalog.count(*)::int::money FROM public.orders WHERE item = 'item-of-2' $$",
  'CREATE CAST (bool AS money) WITH FUNCTION public.price(bool)',
  'CREATE DOMAIN public.d AS money',
  'CREATE FUNCTION public.via_sql(i int) RETURNS text LANGUAGE sql STABLE AS $$ SELECT i::public.td $$',
  'CREATE FUNCTION public.via_plpgsql(i int) RETURNS text LANGUAGE plpgsql STABLE AS $$ DECLARE r public.td; BEGIN r := CAST(i AS public.td); RETURN r; END $$',
  'CREATE FUNCTION public.assigns(i bigint) RETURNS text LANGUAGE plpgsql STABLE AS $$ DECLARE r public.td; BEGIN r := i; RETURN r; END $$',
  `GRANT SELECT ON public.orders TO ${AGENT}`,
];

const REFUSED = [
  'SELECT g::td AS v FROM generate_series(1, 4) g',
  'SELECT ARRAY[3, 4]::td[] AS v',
  'SELECT ARRAY[3, 4]::tda AS v',
  'SELECT via_sql(3) AS v',
  'SELECT via_plpgsql(3) AS v',
  'SELECT true::d AS v',
];

describe.skipIf(!available)("a person's cast between built-in types reached through a domain", { timeout: 300_000 }, () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let scoped: ShimHandle;

  beforeAll(async () => {
    await asPgSuperuser([`CREATE ROLE ${AGENT} LOGIN PASSWORD '${PASSWORD}'`]);
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    const u = new URL(scratch.url);
    const url = `postgres://${AGENT}@${u.host}${u.pathname}`;
    await home.ok(['add', '--no-test', 'shop', url, '--password-stdin', '--context', 'customer_id'], { input: PASSWORD });
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await scoped?.close();
    await home.dispose();
    await scratch?.drop();
    await asPgSuperuser([`DROP ROLE IF EXISTS ${AGENT}`], { ignoreErrors: true });
  });

  it.each(REFUSED)("refuses %s: no other customer's item", async (sql) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*calls (label|price)\(\), a SECURITY DEFINER function/);
    expect(textOf(result)).not.toMatch(/item-of-2/);
  });

  it("hanactl test warns of a person's cast between built-in types", async () => {
    const { stderr } = await home.ok(['test', 'shop']);
    expect(stderr).toMatch(/cast between built-in types through a function made since initdb \(integer AS text, boolean AS money\)/);
  });

  it("refuses a PL/pgSQL assignment that coerces through a person's assignment cast", async () => {
    await scratch?.db.query('DROP CAST (int4 AS text)');
    await scratch?.db.query('DROP CAST (bool AS money)');
    await scratch?.db.query(
      'CREATE FUNCTION public.label8(bigint) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER AS $$ SELECT item FROM public.orders WHERE id = $1 $$',
    );
    await scratch?.db.query('CREATE CAST (int8 AS text) WITH FUNCTION public.label8(bigint) AS ASSIGNMENT');
    const result = await scoped.call('run_query', { sql: 'SELECT assigns(3) AS v' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*calls label8\(\), a SECURITY DEFINER function/);
    expect(textOf(result)).not.toMatch(/item-of-2/);
  });

  // Without the cast from bool there is no cast to d from bool at all: a money value stands in.
  it.each([...REFUSED.filter((sql) => !sql.includes('true::d')), 'SELECT 5::money::d AS v', 'SELECT assigns(3) AS v'])(
    'answers %s once the person’s casts are gone',
    async (sql) => {
      await scratch?.db.query('DROP CAST IF EXISTS (int8 AS text)');
      const result = await scoped.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).not.toMatch(/item-of/);
    },
  );

  it('hanactl test does not warn once they are gone', async () => {
    await scratch?.db.query('DROP CAST IF EXISTS (int8 AS text)');
    const { stderr } = await home.ok(['test', 'shop']);
    expect(stderr).not.toMatch(/cast between built-in types/);
  });
});
