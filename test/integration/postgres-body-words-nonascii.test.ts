/**
 * The names the walk reads in a SQL or PL/pgSQL text body (BODY_WORDS) when they hold characters
 * past ASCII, on the real server, in databases of each kind a server may hold: UTF8 under the C
 * collation, under C.UTF-8, under an ICU collation (where lower() folds `Ö` too), LATIN1 and
 * SQL_ASCII. PostgreSQL's scanner takes every byte past ASCII into an unquoted name (scan.l:
 * ident_start, ident_cont) and folds only A-Z in a multibyte encoding (scansup.c:
 * downcase_identifier), so each body is read from pg_proc, as the walk reads it, and each name
 * is compared with the server's own reading of the same spelling.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_WORDS } from '../../daemon/engines/postgres/postgres-reach.js';
import { asPgSuperuser, PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const TAG = `fix_nonascii_${process.pid}`;

/** [suffix, CREATE DATABASE options, whether the encoding holds characters past Latin-1] */
const DATABASES: readonly (readonly [string, string, boolean])[] = [
  ['c', "ENCODING 'UTF8' LOCALE 'C'", true],
  ['cutf8', "ENCODING 'UTF8' LOCALE 'C.UTF-8'", true],
  ['icu', "ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'de-DE' LOCALE 'C.UTF-8'", true],
  ['latin1', "ENCODING 'LATIN1' LOCALE 'C'", false],
  ['sqlascii', "ENCODING 'SQL_ASCII' LOCALE 'C'", true],
];

/** Unquoted spellings a body may use, each as written in the body. */
const LATIN = ['stat_zurücksetzen', 'größe', 'beenden_ä', 'Größe', 'ÖL', 'äpfel1$x', 'Straße_ÄNDERN'];
const WIDE = ['中文名', '報告_x', 'naïve\u{1F600}', 'ΣΥΝΟΨΗ'];

describe.skipIf(!available)('PostgreSQL text bodies: names past ASCII as the server reads them', () => {
  const dbs = new Map<string, pg.Client>();

  beforeAll(async () => {
    await Promise.all(
      DATABASES.map(async ([suffix, options]) => {
        await asPgSuperuser([`CREATE DATABASE ${TAG}_${suffix} TEMPLATE template0 ${options}`]);
        const url = new URL(PG_URL);
        url.pathname = `/${TAG}_${suffix}`;
        const db = new pg.Client({ connectionString: url.toString() });
        dbs.set(suffix, db);
        await db.connect();
      }),
    );
  });

  afterAll(async () => {
    for (const db of dbs.values()) await db.end().catch(() => {});
    await asPgSuperuser(
      DATABASES.map(([suffix]) => `DROP DATABASE IF EXISTS ${TAG}_${suffix} WITH (FORCE)`),
      { ignoreErrors: true },
    );
  });

  /** The walk's words of a function whose body calls each of `names`, read from pg_proc. */
  const wordsOf = async (db: pg.Client, language: 'sql' | 'plpgsql', names: readonly string[]): Promise<string[]> => {
    const calls = names.map((n) => `${n}()`).join(', ');
    const body = language === 'sql' ? `SELECT ${calls}` : `BEGIN PERFORM ${calls}; END`;
    await db.query('SET check_function_bodies = off');
    await db.query(`CREATE OR REPLACE FUNCTION words_${language}() RETURNS void LANGUAGE ${language} AS $body$ ${body} $body$`);
    const { rows } = await db.query(`SELECT ${BODY_WORDS} AS words FROM pg_catalog.pg_proc p WHERE p.proname = $1`, [`words_${language}`]);
    return rows[0].words;
  };

  /** The server's own reading of the unquoted name `name`: the column it names. */
  const serverReads = async (db: pg.Client, name: string): Promise<string> => {
    const { fields } = await db.query(`SELECT 1 AS ${name}`);
    return fields[0]?.name as string;
  };

  it.each(DATABASES.flatMap(([suffix, , wide]) => (['sql', 'plpgsql'] as const).map((language) => [suffix, language, wide] as const)))(
    'reads every unquoted name past ASCII whole and folded as the server folds it (%s, %s)',
    async (suffix, language, wide) => {
      const db = dbs.get(suffix) as pg.Client;
      const names = wide ? [...LATIN, ...WIDE] : LATIN;
      const words = await wordsOf(db, language, names);
      for (const name of names) {
        const read = await serverReads(db, name);
        expect(words, `${name} in ${suffix}`).toContain(read);
      }
      // Never split at a character past ASCII.
      for (const fragment of ['stat_zur', 'cksetzen', 'gr', 'e', 'beenden_', 'pfel1$x', 'na', 'x']) {
        expect(words, `${fragment} in ${suffix}`).not.toContain(fragment);
      }
    },
  );

  it('folds only A-Z, as the server does in UTF8 under a collation whose lower() folds more', async () => {
    const db = dbs.get('icu') as pg.Client;
    const { rows } = await db.query("SELECT pg_catalog.lower('ÖL') AS l");
    expect(rows[0].l).toBe('öl');
    expect(await serverReads(db, 'ÖL')).toBe('Öl');
    expect(await wordsOf(db, 'sql', ['ÖL'])).toContain('Öl');
  });
});
