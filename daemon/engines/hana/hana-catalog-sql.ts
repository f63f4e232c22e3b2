import { type SearchBranches, searchColumns } from '../../catalog/search-sql.js';

/** A nullable text column for the UNION branches (HANA wants the branches' types to agree). */
const NONE = 'CAST(NULL AS NVARCHAR(256))';

/** `IN a INT, OUT b NVARCHAR` of one routine, from its parameter view, in position order. */
const argumentList = (view: string, owner: string, filter: string, withMode: boolean) =>
  `(SELECT STRING_AGG(${withMode ? "pp.PARAMETER_TYPE || ' ' || " : ''}pp.PARAMETER_NAME || ' ' || pp.DATA_TYPE_NAME, ', ' ORDER BY pp.POSITION)
      FROM ${view} pp WHERE pp.SCHEMA_NAME = ${owner}.SCHEMA_NAME AND ${filter})`;

/**
 * Procedures (SYS.PROCEDURES) and functions (SYS.FUNCTIONS) of one schema with their argument
 * lists; a function's `RETURNS` is its return parameters' types, `TABLE(...)` for a table
 * function. Placeholders come from the caller's binder, in this order: schema, pattern
 * (optional), schema, pattern (optional).
 */
export const HANA_ROUTINES_SQL = (schema1: string, like1: string, schema2: string, like2: string) =>
  `SELECT OBJECT_NAME, OBJECT_KIND, ARGUMENTS, RETURNS, COUNT(*) OVER () AS TOTAL FROM (
     SELECT p.PROCEDURE_NAME AS OBJECT_NAME, 'procedure' AS OBJECT_KIND,
            ${argumentList('SYS.PROCEDURE_PARAMETERS', 'p', 'pp.PROCEDURE_OID = p.PROCEDURE_OID', true)} AS ARGUMENTS,
            ${NONE} AS RETURNS
       FROM SYS.PROCEDURES p WHERE p.SCHEMA_NAME = ${schema1}${like1}
     UNION ALL
     SELECT f.FUNCTION_NAME, 'function',
            ${argumentList('SYS.FUNCTION_PARAMETERS', 'f', "pp.FUNCTION_OID = f.FUNCTION_OID AND pp.PARAMETER_TYPE = 'IN'", false)},
            CASE WHEN f.FUNCTION_USAGE_TYPE = 'TABLE' THEN 'TABLE(' ELSE '' END
              || ${argumentList('SYS.FUNCTION_PARAMETERS', 'f', "pp.FUNCTION_OID = f.FUNCTION_OID AND pp.PARAMETER_TYPE = 'RETURN'", false)}
              || CASE WHEN f.FUNCTION_USAGE_TYPE = 'TABLE' THEN ')' ELSE '' END
       FROM SYS.FUNCTIONS f WHERE f.SCHEMA_NAME = ${schema2}${like2}
   ) ORDER BY OBJECT_NAME`;

/**
 * The search branches over the SYS views. `like(column)` binds the pattern and adds the
 * user-schema filter on `SCHEMA_NAME`.
 */
export function hanaSearchBranches(like: (column: string) => string): SearchBranches {
  return {
    table: (l) =>
      `SELECT ${searchColumns(l, "'table'", 'SCHEMA_NAME', 'TABLE_NAME', NONE, NONE)} FROM SYS.TABLES WHERE IS_USER_DEFINED_TYPE = 'FALSE' AND ${like('TABLE_NAME')}`,
    view: (l) => `SELECT ${searchColumns(l, "'view'", 'SCHEMA_NAME', 'VIEW_NAME', NONE, NONE)} FROM SYS.VIEWS WHERE ${like('VIEW_NAME')}`,
    routine: (l) =>
      `SELECT ${searchColumns(l, "'routine'", 'SCHEMA_NAME', 'PROCEDURE_NAME', NONE, "'procedure'")} FROM SYS.PROCEDURES WHERE ${like('PROCEDURE_NAME')}
       UNION ALL SELECT 'routine', SCHEMA_NAME, FUNCTION_NAME, ${NONE}, 'function' FROM SYS.FUNCTIONS WHERE ${like('FUNCTION_NAME')}`,
    column: (l) =>
      `SELECT ${searchColumns(l, "'column'", 'SCHEMA_NAME', 'COLUMN_NAME', 'TABLE_NAME', 'DATA_TYPE_NAME')} FROM SYS.TABLE_COLUMNS WHERE ${like('COLUMN_NAME')}
       UNION ALL SELECT 'column', SCHEMA_NAME, COLUMN_NAME, VIEW_NAME, DATA_TYPE_NAME FROM SYS.VIEW_COLUMNS WHERE ${like('COLUMN_NAME')}`,
  };
}
