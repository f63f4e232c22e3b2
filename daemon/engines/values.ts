import type { JsonValue } from '../../shared/schemas.js';

/**
 * Turns a driver's cell value into JSON an agent can read without loss: integers beyond
 * 2^53 and decimals stay strings, dates become ISO-8601, binary becomes `\x`-prefixed hex.
 */
export function toJsonValue(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
    default:
      break;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) setCell(out, k, toJsonValue(v));
    return out;
  }
  return String(value);
}

/**
 * Sets `row[name]`. A column (or JSON key) named `__proto__` stays data, an own property of the
 * row, instead of replacing the row's prototype and vanishing from its keys.
 */
export function setCell(row: Record<string, JsonValue>, name: string, value: JsonValue): void {
  if (name === '__proto__') Object.defineProperty(row, name, { value, enumerable: true, writable: true, configurable: true });
  else row[name] = value;
}

/**
 * Column names made unique (`a`, `a_2`, ...) so rows can be objects even when a statement
 * returns two columns of the same name.
 */
export function uniqueColumnNames(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  const taken = new Set(names);
  return names.map((name) => {
    const count = seen.get(name) ?? 0;
    seen.set(name, count + 1);
    if (count === 0) return name;
    let n = count + 1;
    while (taken.has(`${name}_${n}`)) n++;
    const unique = `${name}_${n}`;
    taken.add(unique);
    return unique;
  });
}
