import type { Column, JsonValue } from '../../../shared/schemas.js';
import type { StatementResult } from '../driver.js';
import { rowBudget } from '../row-bytes.js';
import { setCell, toJsonValue, uniqueColumnNames } from '../values.js';
import { viaCallback } from './callbacks.js';
import type { HanaColumnInfoLike, HanaResultSetLike } from './hana-client-types.js';

/** HANA type codes that need care (`@sap/hana-client/extension/TypeCode.js`). */
const BIGINT = 4;

/** Columns as the wire shows them: name and HANA type name. */
export function hanaColumns(info: readonly HanaColumnInfoLike[]): Column[] {
  const names = uniqueColumnNames(info.map((c) => c.columnName));
  return info.map((c, i) => ({ name: names[i] ?? c.columnName, type: c.nativeTypeName || c.typeName || 'UNKNOWN' }));
}

/**
 * One cell as JSON without loss. The client already returns DECIMAL as a string (kept: a
 * decimal never passes through a double), LOBs as Buffer (hex via `toJsonValue`) or string,
 * and dates as strings. A BIGINT that arrives as a string becomes a number only while exact.
 */
export function hanaCellToJson(value: unknown, column: HanaColumnInfoLike): JsonValue {
  if (column.nativeType === BIGINT && typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return toJsonValue(value);
}

function next(rs: HanaResultSetLike): Promise<boolean> | boolean {
  // The synchronous form is only safe when the row is already buffered on the client.
  if (rs.nextCanBlock?.() === false) return rs.next();
  return viaCallback<boolean>((cb) => rs.next(cb));
}

function values(rs: HanaResultSetLike): Promise<Record<string, unknown>> | Record<string, unknown> {
  if (rs.getValuesCanBlock?.() === false) return rs.getValues();
  return viaCallback<Record<string, unknown>>((cb) => rs.getValues(cb));
}

/**
 * Reads at most `maxRows + 1` rows with `next()`, and none after the rows kept reach `maxBytes`
 * (row-bytes.ts), so a large or wide result is never loaded whole; the extra row only tells
 * whether there were more. `checkpoint` runs before each fetch and throws
 * to stop (timeout, cancel). The caller closes the result set.
 */
export async function readResultSet(
  rs: HanaResultSetLike,
  info: readonly HanaColumnInfoLike[],
  maxRows: number,
  checkpoint: () => void,
  maxBytes?: number,
): Promise<StatementResult> {
  const columns = hanaColumns(info);
  const keys = columns.map((c) => c.name);
  const byName = new Set(info.map((c) => c.columnName)).size === info.length;
  const limit = Math.max(0, Math.floor(maxRows)) + 1;
  const rows: Record<string, JsonValue>[] = [];
  const budget = rowBudget(maxBytes);
  let full = false;
  while (rows.length < limit) {
    checkpoint();
    if (!(await next(rs))) break;
    if (budget?.full) {
      full = true; // there is another row, and it is not read
      break;
    }
    const row: Record<string, JsonValue> = {};
    const raws: unknown[] = [];
    // getValues() keys by column name, so repeated names are read one by one by position.
    const named = byName ? await values(rs) : undefined;
    for (let i = 0; i < info.length; i++) {
      const column = info[i] as HanaColumnInfoLike;
      const raw = named && column.columnName in named ? named[column.columnName] : await viaCallback<unknown>((cb) => rs.getValue(i, cb));
      raws.push(raw);
      setCell(row, keys[i] as string, hanaCellToJson(raw, column));
    }
    budget?.add(raws);
    rows.push(row);
  }
  const truncated = full || rows.length > maxRows;
  if (rows.length > maxRows) rows.length = Math.max(0, Math.floor(maxRows));
  return { columns, rows, rowCount: rows.length, truncated };
}
