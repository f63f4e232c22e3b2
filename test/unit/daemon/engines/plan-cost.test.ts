import { describe, expect, it } from 'vitest';
import { HANA_NOT_EXPLAINABLE } from '../../../../daemon/engines/hana/hana-connection.js';
import { costGuardUnavailable } from '../../../../daemon/engines/index.js';
import { MYSQL_NOT_EXPLAINABLE, mysqlPlanCost } from '../../../../daemon/engines/mysql/mysql-cost.js';
import { explainable, leadingWord } from '../../../../daemon/engines/plan-cost.js';
import { POSTGRES_NOT_EXPLAINABLE, postgresTopCost } from '../../../../daemon/engines/postgres/postgres-cost.js';

describe('plan costs as each engine states them', () => {
  it("reads the top node's total cost from the first line of PostgreSQL's EXPLAIN", () => {
    expect(postgresTopCost('Limit  (cost=710.47..710.59 rows=50 width=30)')).toBe(710.59);
    expect(postgresTopCost('Nested Loop  (cost=0.00..125000250.50 rows=10000000000 width=4)')).toBe(125000250.5);
    expect(postgresTopCost('Result  (cost=0.00..0.01 rows=1 width=4)')).toBe(0.01);
    expect(postgresTopCost('JIT:')).toBeUndefined();
    expect(postgresTopCost(null)).toBeUndefined();
  });

  it("reads MySQL's query_cost (a string) and MariaDB 11's cost; MariaDB 10 has none", () => {
    expect(mysqlPlanCost('{"query_block":{"select_id":1,"cost_info":{"query_cost":"1203.45"}}}')).toBe(1203.45);
    expect(mysqlPlanCost({ query_block: { select_id: 1, cost: 0.0122 } })).toBe(0.0122);
    expect(mysqlPlanCost({ query_block: { select_id: 1, nested_loop: [{ table: { table_name: 'a', rows: 10 } }] } })).toBeUndefined();
    expect(mysqlPlanCost({ query_block: { select_id: 1, message: 'No tables used' } })).toBeUndefined();
  });

  it('says where no estimate exists: SQLite always, MariaDB before 11.0', () => {
    expect(costGuardUnavailable('sqlite')).toMatch(/SQLite has no cost estimate/);
    expect(costGuardUnavailable('mysql', '10.11.19-MariaDB-0+deb12u1')).toMatch(
      /MariaDB gives no plan cost before 11\.0 .* on 10\.11\.19\)/,
    );
    expect(costGuardUnavailable('mysql', '11.4.2-MariaDB')).toBeUndefined();
    expect(costGuardUnavailable('mysql', '8.0.36')).toBeUndefined();
    expect(costGuardUnavailable('postgres')).toBeUndefined();
    expect(costGuardUnavailable('hana')).toBeUndefined();
  });
});

describe('which reads are explained', () => {
  it('finds the first word past white space, comments and parentheses', () => {
    expect(leadingWord('  -- note\n /* a */ ((select 1))')).toBe('SELECT');
    expect(leadingWord('# mysql note\nshow tables')).toBe('SHOW');
    expect(leadingWord('')).toBe('');
  });

  it('explains every read but the forms the engine cannot EXPLAIN', () => {
    expect(explainable('SELECT 1', POSTGRES_NOT_EXPLAINABLE)).toBe(true);
    expect(explainable('WITH x AS (SELECT 1) SELECT * FROM x', POSTGRES_NOT_EXPLAINABLE)).toBe(true);
    expect(explainable('VALUES (1)', POSTGRES_NOT_EXPLAINABLE)).toBe(true);
    expect(explainable('SHOW server_version', POSTGRES_NOT_EXPLAINABLE)).toBe(false);
    expect(explainable('EXPLAIN SELECT 1', POSTGRES_NOT_EXPLAINABLE)).toBe(false);
    expect(explainable('DESCRIBE t', MYSQL_NOT_EXPLAINABLE)).toBe(false);
    expect(explainable('SELECT * FROM DUMMY', HANA_NOT_EXPLAINABLE)).toBe(true);
    // A form the scanner does not know is explained: its EXPLAIN failing refuses it (fail closed).
    expect(explainable('/*!50000 SHOW */ tables', MYSQL_NOT_EXPLAINABLE)).toBe(true);
  });
});
