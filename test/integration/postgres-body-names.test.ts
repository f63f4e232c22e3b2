/**
 * The names the walk reads in a SQL or PL/pgSQL text body (BODY_WORDS), and the bodies whose
 * Unicode-escaped names it cannot read for certain (UNREADABLE_NAMES), on the real server: each
 * body is read by the walk's own SQL, and where the server accepts the spelling, the server's own
 * reading of the same text is compared with the walk's.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_WORDS, UNREADABLE_NAMES } from '../../daemon/engines/postgres/postgres-reach.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('PostgreSQL text bodies: Unicode-escaped names as the server reads them', () => {
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
  });

  /** The walk's reading of `body`: its words, and whether its Unicode-escaped names are unreadable. */
  const read = async (body: string): Promise<{ words: string[]; unreadable: boolean }> => {
    const { rows } = await db.query(
      `SELECT ${BODY_WORDS} AS words, ${UNREADABLE_NAMES} AS unreadable FROM (SELECT $1::text AS prosrc) AS p`,
      [body],
    );
    return { words: rows[0].words, unreadable: rows[0].unreadable };
  };

  /** The server's own reading of the expression `expression` (a name as a column alias, or a string). */
  const server = async (sql: string): Promise<string> => {
    const { rows } = await db.query(sql);
    return String(Object.values(rows[0])[0]);
  };

  // [body, the name the server reads, a query that makes the server read the same spelling]
  it.each([
    ['SELECT * FROM U&"\\0069nvoices_c2"', 'invoices_c2', 'SELECT 1 AS U&"\\0069nvoices_c2"'],
    ['SELECT * FROM U&"!0069nvoices_c2" UESCAPE \'!\'', 'invoices_c2', 'SELECT 1 AS U&"!0069nvoices_c2" UESCAPE \'!\''],
    ['SELECT * FROM u&"g0069nvoices_c2" uescape \'g\'', 'invoices_c2', 'SELECT 1 AS u&"g0069nvoices_c2" uescape \'g\''],
    [
      'SELECT * FROM U&"#0069nvoices_c2" /* c */ UESCAPE -- c\n \'#\'',
      'invoices_c2',
      'SELECT 1 AS U&"#0069nvoices_c2" /* c */ UESCAPE -- c\n \'#\'',
    ],
    ['SELECT * FROM U&"*+000069nvoices_c2" UESCAPE \'*\'', 'invoices_c2', 'SELECT 1 AS U&"*+000069nvoices_c2" UESCAPE \'*\''],
    ['SELECT * FROM U&"order!!view" UESCAPE \'!\'', 'order!view', 'SELECT 1 AS U&"order!!view" UESCAPE \'!\''],
    ['SELECT * FROM U&"a\\\\b"', 'a\\b', 'SELECT 1 AS U&"a\\\\b"'],
    ['SELECT * FROM U&"order!D83D!DE00" UESCAPE \'!\'', 'order\u{1F600}', 'SELECT 1 AS U&"order!D83D!DE00" UESCAPE \'!\''],
    ['SELECT * FROM U&"say ""\\0069"""', 'say "i"', 'SELECT 1 AS U&"say ""\\0069"""'],
    ['SELECT * FROM U&"=0069nvoices_c2"UESCAPE\'=\'', 'invoices_c2', 'SELECT 1 AS U&"=0069nvoices_c2"UESCAPE\'=\''],
  ])('reads the name in %j as the server does', async (body, name, query) => {
    const { rows, fields } = await db.query(query);
    expect(rows).toHaveLength(1);
    expect(fields[0]?.name).toBe(name);
    const walk = await read(body);
    expect(walk.unreadable).toBe(false);
    expect(walk.words).toContain(name);
  });

  // [body, the string as the server reads it, a word the walk must take from it]
  it.each([
    ["SELECT query_to_xml(U&'select * from !0069nvoices_c2' UESCAPE '!', true, false, '')", 'select * from invoices_c2', 'invoices_c2'],
    ["SELECT U&'public.\\0069nvoices_c2'::regclass", 'public.invoices_c2', 'invoices_c2'],
    ["SELECT U&'!0049NVOICES_C2' UESCAPE '!'::regclass", 'INVOICES_C2', 'invoices_c2'],
    ["SELECT to_regclass(U&'it''s:0069' UESCAPE ':')", "it'si", 'si'],
  ])('reads the words of the string in %j as the server does', async (body, text, word) => {
    const string = /U&'(?:[^']|'')*'(?: UESCAPE '.')?/.exec(body)?.[0] as string;
    expect(await server(`SELECT ${string} AS x`)).toBe(text);
    const walk = await read(body);
    expect(walk.unreadable).toBe(false);
    expect(walk.words).toContain(word);
  });

  it.each([
    // The server accepts these; this reading does not take the escape's form.
    ['SELECT * FROM U&"!0069nvoices_c2" UESCAPE E\'!\'', true],
    ["SELECT * FROM U&\"!0069nvoices_c2\" UESCAPE ''\n'!'", true],
    ["SELECT * FROM U&\"!0069nvoices_c2\" UESCAPE '!'\n''", true],
    ['SELECT * FROM U&"!0069nvoices_c2" UESCAPE $q$!$q$', true],
    ["SELECT query_to_xml(U&'select * from '\n'\\0069nvoices_c2', true, false, '')", true],
    // A body TOKEN may misread around a Unicode-escaped name.
    ['SELECT $q$ " $q$, U&"!0069nvoices_c2" UESCAPE \'!\'', true],
    ["SELECT 'a\\' , U&\"!0069nvoices_c2\" UESCAPE '!'", true],
    ['/* /* */ */ SELECT * FROM U&"!0069nvoices_c2" UESCAPE \'!\'', true],
    // The server refuses these when it reads the body: they stand for no character, or the escape is not one.
    ['SELECT * FROM U&"\\D800x"', true],
    ['SELECT * FROM U&"\\DE00"', true],
    ['SELECT * FROM U&"\\0000"', true],
    ['SELECT * FROM U&"\\+110000"', true],
    ['SELECT * FROM U&"\\006"', true],
    ['SELECT * FROM U&"a0069" UESCAPE \'a\'', true],
    ['SELECT * FROM U&"+0069" UESCAPE \'+\'', true],
    ['SELECT * FROM U&" 0069" UESCAPE \' \'', true],
    ['SELECT * FROM U&"!0069" UESCAPE \'!!\'', true],
    ['SELECT * FROM U&"!0069" UESCAPE', true],
    // Read for certain: no Unicode escape at all, or one in a comment or a string.
    ['SELECT * FROM "U&x" -- U&"!0069" UESCAPE E\'!\'', false],
    ["SELECT 'U&\"!0069\" UESCAPE E''!'''", false],
    ['SELECT * FROM invoices_c1', false],
    // Coarse where TOKEN may misread: `U&"` anywhere in a body with a dollar quote.
    ["SELECT 'U&\"!0069\" UESCAPE E''!''', $q$x$q$", true],
  ])('judges %j unreadable: %s', async (body, unreadable) => {
    expect((await read(body)).unreadable).toBe(unreadable);
  });

  it.each([
    'SELECT 1 AS U&"!0069nvoices_c2" UESCAPE E\'!\'',
    "SELECT 1 AS U&\"!0069nvoices_c2\" UESCAPE ''\n'!'",
    'SELECT 1 AS U&"!0069nvoices_c2" UESCAPE $q$!$q$',
  ])('is right that the server accepts the escape form in %j', async (query) => {
    const { fields } = await db.query(query);
    expect(fields[0]?.name).toBe('invoices_c2');
  });
});
