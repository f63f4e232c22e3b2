/**
 * The read-only corpus end to end, through the real shim: the SDK Client over stdio drives
 * `hanactl mcp`, which asks a real daemon, which runs each statement on a read-only connection
 * registered with `hanactl add`. A refused statement must come back as an `isError` result that
 * names its rule; a legitimate read must not be refused by the validator (it may still fail on
 * the engine: those failures are counted apart). After every statement the canary database must
 * be as it was at setup, and no file may appear at a path the corpus names.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Param } from '../../shared/schemas.js';
import { POLICY_CORPUS, type PolicyCase } from '../fixtures/policy-corpus.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { available, type Canary, corpusPaths, type Dialect, fileState, label, openCanary } from '../helpers/readonly-canary.js';

/** Unique per run: the PostgreSQL schema, the MariaDB database and the application name. */
const NAME = `hanactl_ro_a_${process.pid}_${randomBytes(3).toString('hex')}`;

/** Values for the placeholders, so the reads that bind parameters really run. */
const PARAMS: Partial<Record<Dialect, Record<string, Param[]>>> = {
  sqlite: { 'SELECT * FROM t WHERE a = ?': [1] },
  mysql: { 'SELECT * FROM t WHERE a = ?': [1] },
  postgres: { 'SELECT $1::text, $2': ['x', 2], 'SELECT * FROM t WHERE id = ANY($1)': ['{1,2}'] },
};

/** A statement whose answer is a plan (EXPLAIN / ANALYZE / DESCRIBE of a statement), not rows or a column list. */
const isPlan = (sql: string): boolean =>
  /^\s*(EXPLAIN|ANALYZE|DESCRIBE|DESC)\b.*\b(SELECT|WITH|VALUES|INSERT|UPDATE|DELETE|MERGE|REPLACE|CREATE|DECLARE|EXECUTE)\b/is.test(sql);

/**
 * A read of the executor's statistics (pg_stat_* views and functions, status counters), of a
 * relation's size (a partition's is its customer's share), or of a figure a write moves on
 * MySQL/MariaDB (a table's AUTO_INCREMENT, rows and sizes, an index's cardinality, the binary
 * log's positions among every variable), refused where rows are separated.
 */
const readsCounters = (sql: string): boolean =>
  /\bpg_stat(io)?_\w+|\bpg_(relation|table|indexes|total_relation|database|tablespace)_size\b|\b(SESSION|GLOBAL)_STATUS\b|\bSHOW\s+((GLOBAL|SESSION)\s+)?(STATUS|VARIABLES)\b|\bSHOW\s+(CREATE\s+TABLE|TABLE\s+STATUS|INDEX|INDEXES|KEYS)\b|\b(TABLE_ROWS|DATA_LENGTH|AUTO_INCREMENT|UUID_SHORT)\b|\bgtid_/i.test(
    sql,
  );

/**
 * The canary's sequence `s` read as a relation, refused where rows are separated. A name any
 * reading of the text gives counts: under NO_BACKSLASH_ESCAPES `'it\\'s'` ends before an `s`.
 */
const readsSequence = (text: string): boolean => /\.s is a sequence: read as a table/.test(text);

/** A read of a system column that is a row's coordinate (ctid, xmin, ...) or a TABLESAMPLE, refused where rows are separated. */
const readsCoordinates = (sql: string): boolean => /\b(ctid|xmin|xmax|cmin|cmax|TABLESAMPLE)\b/i.test(sql);

const casesFor = (dialect: Dialect): PolicyCase[] => POLICY_CORPUS.filter((c) => c.dialects === 'all' || c.dialects.includes(dialect));

/** One tool call; a protocol fault (thrown) reads like an `isError` result. */
async function runQuery(shim: ShimHandle, sql: string, params: Param[] | undefined): Promise<{ isError: boolean; text: string }> {
  try {
    const result: CallToolResult = await shim.call('run_query', { sql, ...(params ? { params } : {}) });
    return { isError: result.isError === true, text: textOf(result) };
  } catch (err) {
    return { isError: true, text: `(thrown) ${err instanceof Error ? err.message : String(err)}` };
  }
}

const home = new TestHome();

afterAll(async () => {
  await home.dispose();
});

for (const dialect of ['sqlite', 'postgres', 'mysql'] as const) {
  describe.skipIf(!available[dialect])(`the corpus through the shim on a read-only ${dialect} connection`, () => {
    const cases = casesFor(dialect);
    const paths = corpusPaths(cases);
    const connection = `ro-${dialect}`;
    const tally = {
      refused: 0,
      namedRule: 0,
      ran: 0,
      plansRefused: 0,
      countersRefused: 0,
      falselyRefused: [] as string[],
      engineFailures: new Map<string, string[]>(),
      changed: [] as string[],
    };
    let canary: Canary;
    let shim: ShimHandle;
    let baseline: unknown;
    let baselineFiles: string[];

    beforeAll(async () => {
      canary = await openCanary(dialect, NAME, 'hanactl-ro-a-');
      // A declared context value, as a deployment would pass one, so `current_setting('mcp.customer_id')` reads it.
      const added = await home.ok(['add', '--no-test', connection, canary.url, '--no-password', '--context', 'CUSTOMER_ID', '--json']);
      expect(JSON.parse(added.stdout)).toMatchObject({ name: connection, allowWrite: false });
      shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '42' }, ['--connection', connection]);
      baseline = await canary.state();
      baselineFiles = paths.map(fileState);
    });

    afterAll(async () => {
      await shim?.close();
      // Closes the daemon's pool before the schema or database goes.
      await home.run(['remove', connection]);
      await canary?.dispose();
    });

    it.for(cases.map((c) => [label(c.sql), c] as const))('%s', async ([name, c]) => {
      const { isError, text } = await runQuery(shim, c.sql, PARAMS[dialect]?.[c.sql]);
      const firstLine = text.split('\n')[0] ?? '';
      if (c.verdict === 'refuse') {
        tally.refused++;
        expect(isError, `${name} was not refused: ${firstLine}`).toBe(true);
        if (c.sql === '') {
          // The tool's input schema (sql: at least 1 character) answers before the validator, without a rule.
          expect(text).toMatch(/Input validation error.* at sql$/);
        } else {
          expect(text).toMatch(/^STATEMENT_REFUSED: Refused: /);
          // On this connection (it separates rows) a plan is refused for its figures before the corpus's own rule is reached.
          if (isPlan(c.sql) && text.includes('(rule: planner-figures)')) tally.plansRefused++;
          else expect(text).toContain(`(rule: ${c.rule})`);
          tally.namedRule++;
        }
      } else if (isPlan(c.sql)) {
        // This connection declares a context name, so it separates rows: a plan's figures would count
        // rows hidden from this caller, and a plan the corpus allows elsewhere is refused here.
        tally.plansRefused++;
        expect(isError, `${name} was not refused on a connection that separates rows: ${firstLine}`).toBe(true);
        expect(text).toContain('(rule: planner-figures)');
      } else if ((readsCounters(c.sql) || readsSequence(text)) && text.includes('(rule: executor-statistics)')) {
        // The executor's statistics count rows hidden from this caller, as a plan's figures do.
        tally.countersRefused++;
      } else if (readsCoordinates(c.sql) && text.includes('(rule: system-column)')) {
        // A tuple's position and transaction ids count rows hidden from this caller too.
        tally.countersRefused++;
      } else if (!isError) {
        tally.ran++;
      } else if (text.startsWith('STATEMENT_REFUSED') && !text.includes('(rule: engine-read-only)')) {
        tally.falselyRefused.push(`${name}: ${firstLine}`);
        expect.soft(firstLine, `the validator refused the legitimate read ${name}`).toBe('');
      } else {
        tally.engineFailures.set(firstLine, [...(tally.engineFailures.get(firstLine) ?? []), name]);
      }

      const state = await canary.state();
      if (!isDeepStrictEqual(state, baseline)) tally.changed.push(name);
      expect(state, `the database changed after ${name}`).toEqual(baseline);
      expect(paths.map(fileState), `a file appeared or changed after ${name}`).toEqual(baselineFiles);
    });

    it('falsely refuses no legitimate read, changes nothing and holds no locks', async () => {
      const allowed = cases.filter((c) => c.verdict === 'allow').length;
      const failed = [...tally.engineFailures.values()].reduce((n, names) => n + names.length, 0);
      const groups = [...tally.engineFailures]
        .sort((x, y) => y[1].length - x[1].length)
        .map(([error, names]) => `  ${names.length} × ${error}\n      ${names.join('\n      ')}`);
      console.log(
        [
          `[${dialect}] shim: ${tally.refused} refused statements refused (${tally.namedRule} naming their rule); ${allowed} reads: ${tally.ran} ran, ` +
            `${tally.plansRefused} plans and ${tally.countersRefused} statistics and system-column reads refused (rows are separated here), ${tally.falselyRefused.length} falsely refused, ${failed} failed on the engine; database changed after ${tally.changed.length}.`,
          ...tally.falselyRefused.map((f) => `  FALSELY REFUSED ${f}`),
          ...groups,
        ].join('\n'),
      );
      expect(tally.falselyRefused).toEqual([]);
      expect(tally.changed).toEqual([]);
      expect(await canary.heldLocks()).toEqual([]);
    });
  });
}
