/**
 * Names past ASCII in a person's SQL and PL/pgSQL function bodies, through the real shim, daemon
 * and PostgreSQL, on read-only connections of a superuser and of a least-privilege login. The
 * server takes every character past ASCII into an unquoted name and folds only A-Z
 * (`Größe_Reset` is größe_reset, `ÖL_RESET` is Öl_reset), so a helper named in German, Greek or
 * Japanese is followed like any other: what it calls is judged, and a harmless one still answers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `fix_nonascii_${process.pid}`;
const ROLE = `fix_nonascii_r${process.pid}`;
const PASSWORD = randomBytes(12).toString('hex');

/** An invoker helper `name` over `call`, and the callers that reach it by its unquoted name. */
const OBJECTS = [
  `CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`,
  `GRANT pg_signal_backend TO ${ROLE}`,
  `GRANT EXECUTE ON FUNCTION pg_catalog.pg_stat_reset() TO ${ROLE}`,
  `GRANT EXECUTE ON FUNCTION pg_catalog.pg_logical_emit_message(boolean, text, text) TO ${ROLE}`,
  // Statistics reset through a helper whose name holds ü.
  'CREATE FUNCTION stat_zurücksetzen() RETURNS void LANGUAGE sql AS $$ SELECT pg_stat_reset() $$',
  'CREATE FUNCTION monatsbericht(z boolean DEFAULT false) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN IF z THEN PERFORM stat_zurücksetzen(); END IF; RETURN 1; END $$',
  // Another session ended through a helper whose name ends in ä.
  'CREATE FUNCTION beenden_ä(p int) RETURNS boolean LANGUAGE sql AS $$ SELECT pg_terminate_backend(p) $$',
  'CREATE FUNCTION aufräumen(p int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN beenden_ä(p); END $$',
  // A message written to the WAL.
  "CREATE FUNCTION nachricht_ü() RETURNS pg_lsn LANGUAGE sql AS $$ SELECT pg_logical_emit_message(false, 'fix_nonascii', 'x') $$",
  'CREATE FUNCTION melden() RETURNS pg_lsn LANGUAGE sql AS $$ SELECT nachricht_ü() $$',
  // The server's password hashes through an owner-rights view whose name holds ö.
  'CREATE VIEW größe_rollen AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid',
  "CREATE FUNCTION schlüssel() RETURNS SETOF text LANGUAGE sql AS $$ SELECT encode(convert_to(rolpassword, 'UTF8'), 'base64') FROM größe_rollen $$",
  // Mixed case: the server folds A-Z only.
  'CREATE FUNCTION Größe_Reset() RETURNS void LANGUAGE sql AS $$ SELECT pg_stat_reset() $$',
  'CREATE FUNCTION via_gemischt() RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM Größe_Reset(); RETURN 1; END $$',
  'CREATE FUNCTION ÖL_reset() RETURNS void LANGUAGE sql AS $$ SELECT pg_stat_reset() $$',
  'CREATE FUNCTION via_öl() RETURNS int LANGUAGE sql AS $$ SELECT 1 FROM (SELECT ÖL_RESET()) AS s $$',
  // Names in other scripts.
  'CREATE FUNCTION 統計_リセット() RETURNS void LANGUAGE sql AS $$ SELECT pg_stat_reset() $$',
  'CREATE FUNCTION 報告() RETURNS int LANGUAGE sql AS $$ SELECT 1 FROM (SELECT 統計_リセット()) AS s $$',
  'CREATE FUNCTION Επαναφορά_X() RETURNS void LANGUAGE sql AS $$ SELECT pg_stat_reset() $$',
  'CREATE FUNCTION σύνοψη() RETURNS int LANGUAGE sql AS $$ SELECT 1 FROM (SELECT Επαναφορά_X()) AS s $$',
  // The same reached from a view.
  'CREATE VIEW v_bericht AS SELECT monatsbericht(true) AS n',
  // Harmless helpers with names past ASCII: still answered.
  'CREATE FUNCTION preis_mit_mwst_ä(x numeric) RETURNS numeric LANGUAGE sql AS $$ SELECT x * 1.19 $$',
  'CREATE FUNCTION rechnung_größe() RETURNS numeric LANGUAGE plpgsql AS $$ BEGIN RETURN preis_mit_mwst_ä(100); END $$',
  'CREATE FUNCTION 合計() RETURNS numeric LANGUAGE sql AS $$ SELECT Rechnung_Größe() $$',
  'CREATE VIEW v_rechnung AS SELECT 合計() AS summe',
  `GRANT SELECT ON größe_rollen, v_bericht, v_rechnung TO ${ROLE}`,
];

const REFUSED_STATEMENTS: readonly (readonly [string, RegExp])[] = [
  ['SELECT monatsbericht(true)', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT via_gemischt()', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT via_öl()', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT 報告()', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT σύνοψη()', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT * FROM v_bericht', /Refused: .*pg_stat_reset\(\)/s],
  ['SELECT melden()', /Refused: .*pg_logical_emit_message\(\)/s],
  ['SELECT aufräumen(0)', /Refused: .*pg_terminate_backend\(\)/s],
  ['SELECT * FROM schlüssel()', /Refused: .*(pg_authid|rolpassword)/s],
];

describe.skipIf(!available)('function bodies that name helpers past ASCII, on PostgreSQL', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let su: ShimHandle;
  let least: ShimHandle;
  let victim: VictimSession | undefined;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    const url = new URL(scratch.url);
    await home.ok(['add', '--no-test', '--no-password', 'fnasu', scratch.url]);
    await home.ok(['add', '--no-test', 'fnaleast', `postgres://${ROLE}@${url.host}${url.pathname}`, '--password-stdin'], {
      input: PASSWORD,
    });
    su = await startShim(home.env, ['--connection', 'fnasu']);
    least = await startShim(home.env, ['--connection', 'fnaleast']);
  });

  afterAll(async () => {
    await victim?.end();
    await su?.close();
    await least?.close();
    await home.dispose();
    await scratch?.drop();
    await asPgSuperuser([`DROP ROLE IF EXISTS ${ROLE}`], { ignoreErrors: true });
  });

  const callers = (): readonly (readonly [string, ShimHandle])[] => [
    ['superuser', su],
    ['least-privilege', least],
  ];

  /** When the statistics of the scratch database were last reset, as the server says. */
  const statsReset = async (): Promise<string | null> => {
    const { rows } = await scratch!.db.query(
      'SELECT stats_reset::text AS r FROM pg_catalog.pg_stat_database WHERE datname = pg_catalog.current_database()',
    );
    return rows[0].r;
  };

  it.each(REFUSED_STATEMENTS)('refuses %s on both read-only connections', async (sql, message) => {
    const before = await statsReset();
    for (const [who, shim] of callers()) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${who}: ${textOf(result)}`).toBe(true);
      expect(textOf(result), who).toMatch(message);
      expect(textOf(result), who).not.toMatch(/SCRAM|c2NyYW|U0NSQU/);
    }
    expect(await statsReset()).toBe(before);
  });

  it('sample_rows refuses a view over a helper named past ASCII', async () => {
    const before = await statsReset();
    for (const [who, shim] of callers()) {
      const result = await shim.call('sample_rows', { schema: 'public', table: 'v_bericht' });
      expect(result.isError, `${who}: ${textOf(result)}`).toBe(true);
      expect(textOf(result), who).toMatch(/Refused: .*pg_stat_reset\(\)/s);
    }
    expect(await statsReset()).toBe(before);
  });

  it("does not end another session's running statement through aufräumen()", async () => {
    const url = new URL(scratch!.url);
    url.username = ROLE;
    url.password = PASSWORD;
    victim = await VictimSession.open(url.toString());
    const { pid } = victim;
    const { done } = await victim.running(scratch!.db);
    for (const [who, shim] of callers()) {
      const result = await shim.call('run_query', { sql: `SELECT aufräumen(${pid})` });
      expect(result.isError, `${who}: ${textOf(result)}`).toBe(true);
      expect(textOf(result), who).toMatch(/Refused: .*pg_terminate_backend\(\)/s);
    }
    // Still running: it ends on our cancel, not by a termination from the calls above.
    const { rows } = await scratch!.db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid]);
    expect(rows).toHaveLength(1);
    await scratch!.db.query('SELECT pg_cancel_backend($1)', [pid]);
    expect(await done).toBe('57014');
  });

  it('still answers harmless helpers named past ASCII', async () => {
    for (const [who, shim] of callers()) {
      for (const sql of ['SELECT rechnung_größe() AS summe', 'SELECT 合計() AS summe', 'SELECT summe FROM v_rechnung']) {
        const result = await shim.call('run_query', { sql });
        expect(result.isError, `${who}: ${sql}: ${textOf(result)}`).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ rows: [{ summe: '119.00' }] });
      }
      const sampled = await shim.call('sample_rows', { schema: 'public', table: 'v_rechnung' });
      expect(sampled.isError, `${who}: ${textOf(sampled)}`).toBeFalsy();
    }
  });
});
