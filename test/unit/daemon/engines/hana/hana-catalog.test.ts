import { describe, expect, it } from 'vitest';
import type { CatalogExecutor, CatalogRow } from '../../../../../daemon/catalog/catalog.js';
import { HanaCatalog } from '../../../../../daemon/engines/hana/hana-catalog.js';
import type { Param } from '../../../../../shared/schemas.js';

/**
 * SAP HANA's catalog SQL, offline: the statements and their bound parameters, and the mapping
 * of row shapes as @sap/hana-client returns them (upper-case labels, BIGINT counts as strings)
 * captured as literals. The live run is test/integration/catalog/hana.test.ts.
 */
interface Call {
  readonly sql: string;
  readonly params: readonly Param[];
  readonly maxRows: number;
}

/** An executor that records each statement and answers the rows of the first matching pattern. */
function recorder(answers: ReadonlyArray<readonly [RegExp, CatalogRow[]]> = []) {
  const calls: Call[] = [];
  const run: CatalogExecutor = async (sql, params, maxRows) => {
    calls.push({ sql, params, maxRows });
    const placeholders = sql.replace(/'[^']*'/g, "''").split('?').length - 1;
    if (placeholders !== params.length) throw new Error(`${placeholders} placeholders but ${params.length} parameters in: ${sql}`);
    return answers.find(([re]) => re.test(sql))?.[1] ?? [];
  };
  return { calls, run };
}

const EVIL = `X"; DROP TABLE CANARY; --`;
const hana = new HanaCatalog({ statementName: () => 'HANACTL_TEST' });

describe('HanaCatalog, offline', () => {
  it('reads the current schema from DUMMY', async () => {
    const { calls, run } = recorder([[/CURRENT_SCHEMA/, [{ SCHEMA_NAME: 'SALES' }]]]);
    expect(await hana.currentSchema(run)).toBe('SALES');
    expect(calls[0]?.sql).toBe('SELECT CURRENT_SCHEMA AS SCHEMA_NAME FROM DUMMY');
  });

  it('lists schemas the user may use, without SYS and _SYS_*, the pattern bound', async () => {
    const { calls, run } = recorder([
      [
        /SYS\.SCHEMAS/,
        [
          { SCHEMA_NAME: 'SALES', TOTAL: '2' },
          { SCHEMA_NAME: 'HR', TOTAL: '2' },
        ],
      ],
    ]);
    expect(await hana.listSchemas(run, { pattern: EVIL, limit: 200 })).toEqual({ schemas: ['SALES', 'HR'], total: 2, truncated: false });
    const [call] = calls;
    expect(call?.sql).toMatch(
      /FROM SYS\.SCHEMAS WHERE HAS_PRIVILEGES = 'TRUE' AND SCHEMA_NAME <> 'SYS' AND SCHEMA_NAME NOT LIKE '!_SYS!_%' ESCAPE '!'/,
    );
    expect(call?.sql).toMatch(/LOWER\(SCHEMA_NAME\) LIKE \? ESCAPE '!'/);
    expect(call?.params).toEqual([`%x"; drop table canary; --%`]);
    expect(call?.sql).not.toContain('DROP');
  });

  it('lists tables (RECORD_COUNT from SYS.M_TABLES) and views, capped with the total', async () => {
    const rows = [
      { OBJECT_NAME: 'ORDERS', OBJECT_KIND: 'table', RECORD_COUNT: '1234567', COMMENTS: 'Customer orders', TOTAL: '2000' },
      { OBJECT_NAME: 'V_OPEN', OBJECT_KIND: 'view', RECORD_COUNT: null, COMMENTS: null, TOTAL: '2000' },
    ];
    const { calls, run } = recorder([[/SYS\.TABLES/, rows]]);
    const list = await hana.listTables(run, { schema: 'SALES', pattern: 'ord%', limit: 2 });
    expect(list).toEqual({
      schema: 'SALES',
      tables: [
        { name: 'ORDERS', kind: 'table', rowEstimate: 1234567, comment: 'Customer orders' },
        { name: 'V_OPEN', kind: 'view', rowEstimate: null, comment: null },
      ],
      total: 2000,
      truncated: true,
    });
    const [call] = calls;
    expect(call?.sql).toMatch(/LEFT JOIN SYS\.M_TABLES m ON m\.SCHEMA_NAME = t\.SCHEMA_NAME AND m\.TABLE_NAME = t\.TABLE_NAME/);
    expect(call?.sql).toMatch(/FROM SYS\.VIEWS v WHERE v\.SCHEMA_NAME = \?/);
    expect(call?.sql).toContain("t.IS_USER_DEFINED_TYPE = 'FALSE'");
    expect(call?.params).toEqual(['SALES', 'ord%', 'SALES', 'ord%']);
    expect(call?.maxRows).toBe(2);
  });

  it('finds a table by its exact or upper-case name, tables and views alike', async () => {
    const { calls, run } = recorder([
      [/SYS\.TABLES/, [{ SCHEMA_NAME: 'SALES', OBJECT_NAME: 'ORDERS', OBJECT_KIND: 'table', COMMENTS: null }]],
    ]);
    expect(await hana.findTables(run, 'sales', 'orders')).toEqual([{ schema: 'SALES', table: 'ORDERS', kind: 'table', comment: null }]);
    expect(calls[0]?.sql).toMatch(
      /SCHEMA_NAME IN \(\?, UPPER\(\?\)\) AND IS_USER_DEFINED_TYPE = 'FALSE' AND TABLE_NAME IN \(\?, UPPER\(\?\)\)/,
    );
    expect(calls[0]?.params).toEqual(['sales', 'sales', 'orders', 'orders', 'sales', 'sales', 'orders', 'orders']);
    expect(calls).toHaveLength(1);
  });

  it('falls back to a case-insensitive match within the schema only when the keyed lookup finds nothing', async () => {
    const { calls, run } = recorder([
      [/LOWER\(TABLE_NAME\)/, [{ SCHEMA_NAME: 'S', OBJECT_NAME: 'Mixed Case', OBJECT_KIND: 'table', COMMENTS: null }]],
    ]);
    expect((await hana.findTables(run, 'S', 'mixed case')).map((t) => t.table)).toEqual(['Mixed Case']);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.sql).toMatch(/LOWER\(VIEW_NAME\) = LOWER\(\?\)/);
    expect(calls[1]?.params).toEqual(['S', 'S', 'mixed case', 'S', 'S', 'mixed case']);
  });

  it('describes columns, primary key, a composite foreign key and indexes from the SYS views', async () => {
    const { calls, run } = recorder([
      [
        /SYS\.TABLE_COLUMNS/,
        [
          {
            COLUMN_NAME: 'CUSTOMER_ID',
            DATA_TYPE_NAME: 'INTEGER',
            LENGTH: 10,
            SCALE: 0,
            IS_NULLABLE: 'FALSE',
            DEFAULT_VALUE: null,
            COMMENTS: null,
            POSITION: 1,
          },
          {
            COLUMN_NAME: 'ORDER_NO',
            DATA_TYPE_NAME: 'NVARCHAR',
            LENGTH: 10,
            SCALE: null,
            IS_NULLABLE: 'FALSE',
            DEFAULT_VALUE: null,
            COMMENTS: null,
            POSITION: 2,
          },
          {
            COLUMN_NAME: 'TOTAL',
            DATA_TYPE_NAME: 'DECIMAL',
            LENGTH: 15,
            SCALE: 2,
            IS_NULLABLE: 'TRUE',
            DEFAULT_VALUE: '0',
            COMMENTS: 'Gross',
            POSITION: 3,
          },
        ],
      ],
      [/SYS\.CONSTRAINTS/, [{ COLUMN_NAME: 'CUSTOMER_ID' }, { COLUMN_NAME: 'ORDER_NO' }]],
      [
        /SYS\.REFERENTIAL_CONSTRAINTS/,
        [
          {
            CONSTRAINT_NAME: 'FK_ORDER',
            COLUMN_NAME: 'CUSTOMER_ID',
            REFERENCED_SCHEMA_NAME: 'SALES',
            REFERENCED_TABLE_NAME: 'HEADERS',
            REFERENCED_COLUMN_NAME: 'CID',
          },
          {
            CONSTRAINT_NAME: 'FK_ORDER',
            COLUMN_NAME: 'ORDER_NO',
            REFERENCED_SCHEMA_NAME: 'SALES',
            REFERENCED_TABLE_NAME: 'HEADERS',
            REFERENCED_COLUMN_NAME: 'NO',
          },
        ],
      ],
      [
        /SYS\.INDEXES/,
        [
          { INDEX_NAME: '_SYS_TREE_RS_1_#0_#P0', CONSTRAINT: 'PRIMARY KEY', COLUMN_NAME: 'CUSTOMER_ID' },
          { INDEX_NAME: '_SYS_TREE_RS_1_#0_#P0', CONSTRAINT: 'PRIMARY KEY', COLUMN_NAME: 'ORDER_NO' },
          { INDEX_NAME: 'IX_TOTAL', CONSTRAINT: null, COLUMN_NAME: 'TOTAL' },
          { INDEX_NAME: 'UX_NO', CONSTRAINT: 'NOT NULL UNIQUE', COLUMN_NAME: 'ORDER_NO' },
        ],
      ],
    ]);
    const d = await hana.describeTable(run, { schema: 'SALES', table: 'ORDERS', kind: 'table', comment: 'Customer orders' });
    expect(d).toEqual({
      schema: 'SALES',
      table: 'ORDERS',
      kind: 'table',
      comment: 'Customer orders',
      columns: [
        { name: 'CUSTOMER_ID', type: 'INTEGER', nullable: false, default: null, comment: null },
        { name: 'ORDER_NO', type: 'NVARCHAR(10)', nullable: false, default: null, comment: null },
        { name: 'TOTAL', type: 'DECIMAL(15,2)', nullable: true, default: '0', comment: 'Gross' },
      ],
      primaryKey: ['CUSTOMER_ID', 'ORDER_NO'],
      foreignKeys: [
        { name: 'FK_ORDER', columns: ['CUSTOMER_ID', 'ORDER_NO'], refSchema: 'SALES', refTable: 'HEADERS', refColumns: ['CID', 'NO'] },
      ],
      indexes: [
        { name: '_SYS_TREE_RS_1_#0_#P0', columns: ['CUSTOMER_ID', 'ORDER_NO'], unique: true, primary: true },
        { name: 'IX_TOTAL', columns: ['TOTAL'], unique: false, primary: false },
        { name: 'UX_NO', columns: ['ORDER_NO'], unique: true, primary: false },
      ],
    });
    expect(calls.map((c) => c.params)).toEqual([
      ['SALES', 'ORDERS', 'SALES', 'ORDERS'],
      ['SALES', 'ORDERS'],
      ['SALES', 'ORDERS'],
      ['SALES', 'ORDERS'],
    ]);
    expect(calls[0]?.sql).toMatch(/FROM SYS\.VIEW_COLUMNS WHERE SCHEMA_NAME = \? AND VIEW_NAME = \?/);
    expect(calls[1]?.sql).toMatch(/IS_PRIMARY_KEY = 'TRUE' ORDER BY POSITION/);
    expect(calls[3]?.sql).toContain('i."CONSTRAINT"');
  });

  it('lists procedures (SYS.PROCEDURES) and functions (SYS.FUNCTIONS) with their arguments', async () => {
    const rows = [
      {
        OBJECT_NAME: 'GET_ORDERS',
        OBJECT_KIND: 'procedure',
        ARGUMENTS: 'IN P_CUSTOMER INTEGER, OUT RESULT TABLE',
        RETURNS: null,
        TOTAL: '2',
      },
      { OBJECT_NAME: 'ORDER_TOTAL', OBJECT_KIND: 'function', ARGUMENTS: 'P_CUSTOMER INTEGER', RETURNS: 'DECIMAL', TOTAL: '2' },
    ];
    const { calls, run } = recorder([[/SYS\.PROCEDURES/, rows]]);
    const list = await hana.listRoutines(run, { schema: 'SALES', pattern: 'order', limit: 200 });
    expect(list.routines).toEqual([
      { name: 'GET_ORDERS', kind: 'procedure', arguments: 'IN P_CUSTOMER INTEGER, OUT RESULT TABLE', returns: null },
      { name: 'ORDER_TOTAL', kind: 'function', arguments: 'P_CUSTOMER INTEGER', returns: 'DECIMAL' },
    ]);
    const sql = calls[0]?.sql ?? '';
    expect(sql).toMatch(/FROM SYS\.PROCEDURES p WHERE p\.SCHEMA_NAME = \? AND LOWER\(p\.PROCEDURE_NAME\) LIKE \? ESCAPE '!'/);
    expect(sql).toMatch(/FROM SYS\.FUNCTIONS f WHERE f\.SCHEMA_NAME = \? AND LOWER\(f\.FUNCTION_NAME\) LIKE \? ESCAPE '!'/);
    expect(sql).toMatch(/STRING_AGG\(pp\.PARAMETER_TYPE \|\| ' ' \|\| pp\.PARAMETER_NAME/);
    expect(sql).toContain('FROM SYS.PROCEDURE_PARAMETERS pp');
    expect(calls[0]?.params).toEqual(['SALES', '%order%', 'SALES', '%order%']);
  });

  it('searches only the requested kinds, across user schemas, mapping upper-case labels', async () => {
    const { calls, run } = recorder([
      [
        /SYS\.TABLE_COLUMNS/,
        [{ KIND: 'column', SCHEMA_NAME: 'SALES', OBJECT_NAME: 'ORDER_NO', PARENT_NAME: 'ORDERS', DETAIL: 'NVARCHAR', TOTAL: 1 }],
      ],
    ]);
    const found = await hana.search(run, { pattern: EVIL, kinds: ['column'], limit: 200 });
    expect(found).toEqual({
      hits: [{ kind: 'column', schema: 'SALES', name: 'ORDER_NO', table: 'ORDERS', detail: 'NVARCHAR' }],
      total: 1,
      truncated: false,
    });
    const sql = calls[0]?.sql ?? '';
    expect(sql).toContain('FROM SYS.VIEW_COLUMNS');
    expect(sql).not.toMatch(/SYS\.TABLES|SYS\.PROCEDURES/);
    expect(sql).not.toContain('DROP');
    expect(calls[0]?.params).toHaveLength(2);
    const all = recorder();
    expect(await hana.search(all.run, { pattern: 'x', kinds: ['table', 'view', 'routine', 'column'], limit: 5 })).toEqual({
      hits: [],
      total: 0,
      truncated: false,
    });
    expect(all.calls[0]?.sql).toMatch(/SYS\.TABLES[\s\S]*SYS\.VIEWS[\s\S]*SYS\.PROCEDURES[\s\S]*SYS\.FUNCTIONS[\s\S]*SYS\.TABLE_COLUMNS/);
    expect(all.calls[0]?.params).toHaveLength(6);
  });

  it('quotes the proven names of a sample with embedded quotes doubled, the limit bound', () => {
    expect(hana.sampleStatement({ schema: 'MY"SCHEMA', table: 'Mixed Case', kind: 'table', comment: null }, 11)).toEqual({
      sql: 'SELECT * FROM "MY""SCHEMA"."Mixed Case" LIMIT ?',
      params: [11],
    });
  });

  it('explains with EXPLAIN PLAN into EXPLAIN_PLAN_TABLE, reads the rows back and deletes them', async () => {
    expect(hana.explainWrites).toBe(true);
    const plan = [
      {
        OPERATOR_ID: 1,
        PARENT_OPERATOR_ID: null,
        LEVEL: 1,
        OPERATOR_NAME: 'COLUMN SEARCH',
        OPERATOR_DETAILS: null,
        SCHEMA_NAME: null,
        TABLE_NAME: null,
        EXECUTION_ENGINE: 'COLUMN',
        OUTPUT_SIZE: 10,
        SUBTREE_COST: 1.5,
      },
      {
        OPERATOR_ID: 2,
        PARENT_OPERATOR_ID: 1,
        LEVEL: 2,
        OPERATOR_NAME: 'FILTER',
        OPERATOR_DETAILS: 'FILTER CONDITION:\n  ORDERS.TOTAL > 100',
        SCHEMA_NAME: 'SALES',
        TABLE_NAME: 'ORDERS',
        EXECUTION_ENGINE: 'COLUMN',
        OUTPUT_SIZE: 10,
        SUBTREE_COST: 1.2,
      },
    ];
    const { calls, run } = recorder([[/FROM EXPLAIN_PLAN_TABLE WHERE/, plan]]);
    const result = await hana.explain(run, 'SELECT * FROM ORDERS WHERE TOTAL > 100');
    expect(calls.map((c) => [c.sql.split('\n')[0]?.trim(), c.params])).toEqual([
      ["EXPLAIN PLAN SET STATEMENT_NAME = 'HANACTL_TEST' FOR SELECT * FROM ORDERS WHERE TOTAL > 100", []],
      ['SELECT OPERATOR_ID, PARENT_OPERATOR_ID, "LEVEL", OPERATOR_NAME, OPERATOR_DETAILS, SCHEMA_NAME, TABLE_NAME,', ['HANACTL_TEST']],
      ['DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?', ['HANACTL_TEST']],
    ]);
    expect(result.text).toBe(
      'COLUMN SEARCH [COLUMN] (rows=10 cost=1.5)\n  -> FILTER on SALES.ORDERS [COLUMN] (rows=10 cost=1.2)\n       FILTER CONDITION: ORDERS.TOTAL > 100',
    );
    expect(result.plan).toEqual(plan);
  });

  it('deletes its plan rows even when reading them fails', async () => {
    const calls: string[] = [];
    const run: CatalogExecutor = async (sql) => {
      calls.push(sql.trim().split(/\s+/)[0] ?? '');
      if (sql.trim().startsWith('SELECT')) throw new Error('read failed');
      return [];
    };
    await expect(hana.explain(run, 'SELECT 1 FROM DUMMY')).rejects.toThrow('read failed');
    expect(calls).toEqual(['EXPLAIN', 'SELECT', 'DELETE']);
  });

  it('generates plan statement names of letters, digits and _ only', async () => {
    const names = new Set<string>();
    const run: CatalogExecutor = async (sql) => {
      const m = /STATEMENT_NAME = '([^']*)'/.exec(sql);
      if (m?.[1]) names.add(m[1]);
      return [];
    };
    const real = new HanaCatalog();
    await real.explain(run, 'SELECT 1 FROM DUMMY');
    await real.explain(run, 'SELECT 1 FROM DUMMY');
    expect([...names]).toHaveLength(2);
    for (const n of names) expect(n).toMatch(/^HANACTL_[0-9A-F]{16}$/);
    const bad = new HanaCatalog({ statementName: () => "X'; DROP TABLE T; --" });
    await expect(bad.explain(run, 'SELECT 1 FROM DUMMY')).rejects.toThrow(/letters, digits/);
  });
});
