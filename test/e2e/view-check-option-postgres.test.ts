/**
 * Writes through a view that filters rows, on a writable connection that separates rows, through
 * the real shim and daemon. PostgreSQL writes through an automatically updatable view without
 * checking the rows an INSERT or UPDATE leaves against the view's condition unless the view (or a
 * view above it, with CASCADED) has a check option: without one, customer 1 could move its row to
 * customer 2 or plant a row there. Such a write is refused, naming the view and the remedy; with
 * WITH CASCADED CHECK OPTION the server itself rejects those rows, and writes that keep the row
 * inside the view answer. A DELETE creates no row and answers.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { addShopConnections, createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';
import { scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_checkopt_${process.pid}`;
const AGENT = `${TAG}_agent`;
const MINE = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

const OBJECTS = [
  'CREATE TABLE vorders (id serial PRIMARY KEY, customer_id int NOT NULL, item text, secret text)',
  "INSERT INTO vorders (id, customer_id, item) VALUES (1, 1, 'one'), (2, 2, 'two'), (3, 1, 'three'), (4, 1, 'four')",
  // The recipe's view without a check option, and with one.
  `CREATE VIEW my_vorders WITH (security_barrier = true) AS SELECT * FROM vorders WHERE ${MINE}`,
  `CREATE VIEW my_vorders_checked WITH (security_barrier = true) AS SELECT * FROM vorders WHERE ${MINE} WITH CASCADED CHECK OPTION`,
  // Over the unchecked view: LOCAL checks only its own (empty) condition; CASCADED covers the one beneath.
  'CREATE VIEW over_local AS SELECT * FROM my_vorders WITH LOCAL CHECK OPTION',
  'CREATE VIEW over_cascaded AS SELECT * FROM my_vorders WITH CASCADED CHECK OPTION',
  // A view that filters nothing: nothing to hide.
  'CREATE VIEW all_vorders AS SELECT id, customer_id, item FROM vorders',
  // A view that takes INSERT with its own trigger: the trigger's code decides what it writes.
  `CREATE VIEW my_vorders_trig WITH (security_barrier = true) AS SELECT * FROM vorders WHERE ${MINE}`,
  `CREATE FUNCTION vorders_trig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
     INSERT INTO vorders (id, customer_id, item) VALUES (NEW.id, nullif(current_setting('mcp.customer_id', true), '')::int, NEW.item);
     RETURN NEW; END $$`,
  'CREATE TRIGGER vorders_trig INSTEAD OF INSERT ON my_vorders_trig FOR EACH ROW EXECUTE FUNCTION vorders_trig()',
];

describe.skipIf(!available)('writes through views that filter rows on PostgreSQL', () => {
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  const { writable, home } = scopedAndPlainShims({
    async setUp(home) {
      login = await createPgLogin(AGENT);
      scratch = await scratchPgDatabase(TAG, [
        ...OBJECTS,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON my_vorders, my_vorders_checked, over_local, over_cascaded, all_vorders, my_vorders_trig TO ${AGENT}`,
      ]);
      const url = login.url(scratch.url);
      await addShopConnections(home, url, login.password);
    },
    async dispose() {
      await scratch?.drop();
      await login?.drop();
    },
    more: { writable: { connection: 'shop_rw', customer: '1' } },
  });

  const table = async () => (await scratch?.db.query('SELECT id, customer_id, item FROM vorders ORDER BY id'))?.rows;

  const refused = (result: CallToolResult): string => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: view-check-option)');
    return text;
  };

  it.each([
    ["UPDATE my_vorders SET customer_id = 2, item = 'moved-by-1' WHERE id = 1", 'my_vorders', 'my_vorders'],
    ["INSERT INTO my_vorders (id, customer_id, item) VALUES (100, 2, 'planted-by-1')", 'my_vorders', 'my_vorders'],
    [
      "INSERT INTO my_vorders (id, customer_id, item) VALUES (1, 2, 'x') ON CONFLICT (id) DO UPDATE SET customer_id = 2",
      'my_vorders',
      'my_vorders',
    ],
    // Even a write that keeps the row inside: whether it does is the server's to check.
    ["UPDATE my_vorders SET item = 'renamed' WHERE id = 1", 'my_vorders', 'my_vorders'],
    ['UPDATE over_local SET customer_id = 2 WHERE id = 1', 'my_vorders', 'over_local'],
  ])('refuses %s, naming the view and the remedy, and the table is unchanged', async (sql, view, remedyOn) => {
    const before = await table();
    const text = refused(await writable.call('run_query', { sql }));
    expect(text).toContain(view);
    expect(text).toContain(`ALTER VIEW ${remedyOn} SET (check_option = cascaded)`);
    expect(await table()).toEqual(before);
  });

  it('lets the server reject rows that leave a view with CASCADED CHECK OPTION, and answers writes that keep them inside', async () => {
    const before = await table();
    for (const sql of [
      "UPDATE my_vorders_checked SET customer_id = 2, item = 'moved-by-1' WHERE id = 1",
      "INSERT INTO my_vorders_checked (id, customer_id, item) VALUES (100, 2, 'planted-by-1')",
      "UPDATE over_cascaded SET customer_id = 2, item = 'moved-by-1' WHERE id = 1",
      "INSERT INTO over_cascaded (id, customer_id, item) VALUES (100, 2, 'planted-by-1')",
    ]) {
      const result = await writable.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result)).toMatch(/new row violates check option/);
    }
    expect(await table()).toEqual(before);
    for (const sql of [
      "UPDATE my_vorders_checked SET item = 'renamed' WHERE id = 1",
      "INSERT INTO my_vorders_checked (id, customer_id, item) VALUES (101, 1, 'mine')",
      "UPDATE over_cascaded SET item = 'renamed-again' WHERE id = 1",
    ]) {
      const result = await writable.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    const after = await table();
    expect(after?.find((r) => r.id === 1)).toEqual({ id: 1, customer_id: 1, item: 'renamed-again' });
    expect(after?.find((r) => r.id === 101)).toEqual({ id: 101, customer_id: 1, item: 'mine' });
  });

  it('leaves an INSERT into a view that takes it with an INSTEAD OF trigger to the trigger, and refuses its UPDATE', async () => {
    const inserted = await writable.call('run_query', {
      sql: "INSERT INTO my_vorders_trig (id, customer_id, item) VALUES (200, 2, 'via-trigger')",
    });
    expect(textOf(inserted)).not.toContain('view-check-option');
    const moved = refused(await writable.call('run_query', { sql: 'UPDATE my_vorders_trig SET customer_id = 2 WHERE id = 1' }));
    expect(moved).toContain('ALTER VIEW my_vorders_trig SET (check_option = cascaded)');
  });

  it('warns on test of a connection with context names of the views its login may write through without a check option', async () => {
    const { stderr } = await home.ok(['test', 'shop_rw']);
    expect(stderr).toMatch(/may INSERT into or UPDATE views that filter rows but have no check option: [^\n]*my_vorders/);
    expect(stderr).toContain('check_option = cascaded');
    expect(stderr).not.toMatch(/no check option:[^\n]*(my_vorders_checked|over_cascaded|all_vorders)/);
    expect((await home.ok(['test', 'plain'])).stderr).not.toMatch(/no check option/);
  });

  it('answers a DELETE through a view without a check option, and writes through a view that filters nothing', async () => {
    const deleted = await writable.call('run_query', { sql: 'DELETE FROM my_vorders WHERE id = 3' });
    expect(deleted.isError, textOf(deleted)).toBeFalsy();
    const updated = await writable.call('run_query', { sql: "UPDATE all_vorders SET item = 'plain' WHERE id = 4" });
    expect(updated.isError, textOf(updated)).toBeFalsy();
    const rows = await table();
    expect(rows?.some((r) => r.id === 3)).toBe(false);
    expect(rows?.find((r) => r.id === 4)?.item).toBe('plain');
  });
});
