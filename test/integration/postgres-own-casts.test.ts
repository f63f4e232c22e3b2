/**
 * Every type conversion in hanactl's own PostgreSQL statements is one a person's pg_cast row
 * cannot replace. PostgreSQL picks a conversion's pathway by looking up pg_cast first
 * (parse_coerce.c find_coercion_pathway) and falls back, only when no row is there, to an I/O
 * conversion (CoerceViaIO), an element-wise array conversion (ArrayCoerceExpr), or a relabel of
 * int2vector/oidvector to its array: a superuser's CREATE CAST for such a pair puts their
 * function in hanactl's statement, where a forced error can come back as a value and a check
 * then passes. The built-in rows (oid < 16384) are pinned and cannot be replaced, so only a
 * conversion through one of them is safe. The server's own parse tree says which pathway each
 * conversion took: each statement is prepared with debug_print_parse on, and the tree must hold
 * no I/O or array conversion and no call of a function made since initdb (the trap casts below
 * cover the vector relabels).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRaw } from '../../daemon/policy/pg-wasm.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { everyText } from '../helpers/pg-own-sql.js';

const available = await serverAvailable('postgres');
const DB = `hanactl_owncasts_${process.pid}`;

/** The pairs whose fallback is a relabel: a trap cast makes their use show as a call. */
const TRAPS = [
  'CREATE FUNCTION public.trap_oids(x pg_catalog.oidvector) RETURNS pg_catalog.oid[] LANGUAGE sql AS $$ SELECT NULL::pg_catalog.oid[] $$',
  'CREATE CAST (pg_catalog.oidvector AS pg_catalog.oid[]) WITH FUNCTION public.trap_oids(pg_catalog.oidvector)',
  'CREATE FUNCTION public.trap_int2s(x pg_catalog.int2vector) RETURNS pg_catalog.int2[] LANGUAGE sql AS $$ SELECT NULL::pg_catalog.int2[] $$',
  'CREATE CAST (pg_catalog.int2vector AS pg_catalog.int2[]) WITH FUNCTION public.trap_int2s(pg_catalog.int2vector)',
  // What the catalog tools' sample statement reads.
  'CREATE SCHEMA s',
  'CREATE TABLE s.t (id int)',
];

/** The conversions in a parse tree as printed by debug_print_parse that a person's pg_cast row could replace. */
function replaceable(tree: string): string[] {
  const found: string[] = [];
  for (const m of tree.matchAll(/\{COERCEVIAIO :arg [\s\S]*? :resulttype (\d+)/g)) found.push(`I/O conversion to type ${m[1]}`);
  if (tree.includes('{COERCEVIAIO') && found.length === 0) found.push('I/O conversion');
  if (tree.includes('{ARRAYCOERCEEXPR')) found.push('array conversion element by element');
  for (const m of tree.matchAll(/\{FUNCEXPR :funcid (\d+)/g)) if (Number(m[1]) >= 16384) found.push(`call of function ${m[1]}`);
  return found;
}

describe.skipIf(!available)("hanactl's own PostgreSQL statements convert types only through pinned pg_cast rows", () => {
  let scratch: ScratchPgDatabase;
  beforeAll(async () => {
    scratch = await scratchPgDatabase(DB, TRAPS);
  });
  afterAll(async () => {
    await scratch?.drop();
  }, 120_000);

  it('the check sees an I/O conversion, an array conversion and a trapped relabel', async () => {
    const sql =
      "SELECT CAST(pg_catalog.concat('a', $1::pg_catalog.text) AS pg_catalog.int4), $2::pg_catalog.text[]::pg_catalog.name[], ix.indclass::pg_catalog.oid[] FROM pg_catalog.pg_index ix";
    const found = await conversions(scratch, sql);
    expect(found.join('; ')).toMatch(/I\/O conversion to type 23/);
    expect(found.join('; ')).toMatch(/array conversion/);
    expect(found.join('; ')).toMatch(/call of function/);
    expect(await conversions(scratch, 'SELECT c.relname::pg_catalog.text, c.oid::pg_catalog.int8 FROM pg_catalog.pg_class c')).toEqual([]);
  });

  it('every statement hanactl sends (calls, resolve steps, walks, clean-up, catalog tools) holds none', async () => {
    const texts = await everyText();
    const found: string[] = [];
    for (const [where, sql] of texts) {
      const conv = await conversions(scratch, sql).catch((err: Error) => [`does not prepare: ${err.message}`]);
      if (conv.length > 0) found.push(`${where}: ${[...new Set(conv)].join(', ')}`);
    }
    expect(found).toEqual([]);
  }, 60_000);
});

/** The plain queries in `sql` (utility statements such as BEGIN, SET or DO convert nothing of their own). */
function queries(sql: string): string[] {
  const raw = parseRaw(sql);
  if (!raw.ok) throw new Error(`does not parse: ${raw.message}`);
  const { stmts } = JSON.parse(raw.json) as { stmts: { stmt: Record<string, unknown>; stmt_location?: number; stmt_len?: number }[] };
  const bytes = Buffer.from(sql);
  return stmts
    .filter(({ stmt }) => ['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt'].includes(Object.keys(stmt)[0] as string))
    .map(({ stmt_location = 0, stmt_len }) => bytes.subarray(stmt_location, stmt_len ? stmt_location + stmt_len : undefined).toString());
}

/** What `sql`'s parse trees convert through a pathway a person's cast could take over. */
async function conversions(scratch: ScratchPgDatabase, sql: string): Promise<string[]> {
  const trees: string[] = [];
  const listen = (msg: { message?: string; detail?: string }) => {
    if (msg.message?.startsWith('parse tree') && msg.detail) trees.push(msg.detail);
  };
  scratch.db.on('notice', listen);
  try {
    for (const query of queries(sql)) {
      await scratch.db.query("SET debug_print_parse = on; SET debug_pretty_print = off; SET client_min_messages = 'log'");
      try {
        await scratch.db.query(`PREPARE hanactl_owncasts_probe AS ${query}`);
      } finally {
        await scratch.db.query('DEALLOCATE ALL; RESET client_min_messages; RESET debug_print_parse; RESET debug_pretty_print');
      }
    }
  } finally {
    scratch.db.off('notice', listen);
  }
  return trees.flatMap(replaceable);
}
