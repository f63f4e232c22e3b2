import type { JsonValue } from '../../shared/schemas.js';

/**
 * How deep a cell's arrays and JSON objects are kept as structure. A value nested deeper (a
 * jsonb of 3,000 brackets is valid) is given from that level down as its JSON text, so that no
 * walk over a result recurses once per level of data the database holds.
 */
export const MAX_VALUE_DEPTH = 64;

/** A scalar as JSON text, as toJsonValue would give it. */
function scalarText(value: unknown): string {
  const json = toJsonValue(value, 0);
  return JSON.stringify(json) ?? 'null';
}

/**
 * `value` as JSON text, for a part nested past MAX_VALUE_DEPTH: written with a stack of its own,
 * since JSON.stringify recurses once per level too and fails some thousands of levels down.
 */
export function deepValueText(value: unknown): string {
  const out: string[] = [];
  type Frame = { readonly items: readonly [string | undefined, unknown][]; i: number; readonly close: string };
  const open = (v: unknown): Frame | undefined => {
    if (Array.isArray(v)) {
      out.push('[');
      return { items: v.map((x): [undefined, unknown] => [undefined, x]), i: 0, close: ']' };
    }
    if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v) && !(v instanceof Uint8Array)) {
      out.push('{');
      return { items: Object.entries(v as Record<string, unknown>), i: 0, close: '}' };
    }
    out.push(scalarText(v));
    return undefined;
  };
  const stack: Frame[] = [];
  const first = open(value);
  if (first) stack.push(first);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.i >= frame.items.length) {
      out.push(frame.close);
      stack.pop();
      continue;
    }
    const [key, inner] = frame.items[frame.i] as [string | undefined, unknown];
    if (frame.i > 0) out.push(',');
    frame.i++;
    if (key !== undefined) out.push(`${JSON.stringify(key)}:`);
    const child = open(inner);
    if (child) stack.push(child);
  }
  return out.join('');
}

/**
 * Turns a driver's cell value into JSON an agent can read without loss: integers beyond
 * 2^53 and decimals stay strings, dates become ISO-8601, binary becomes `\x`-prefixed hex.
 */
export function toJsonValue(value: unknown, depth = 0): JsonValue {
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
  if (typeof value === 'object' && depth >= MAX_VALUE_DEPTH) return deepValueText(value);
  if (Array.isArray(value)) return value.map((v) => toJsonValue(v, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) setCell(out, k, toJsonValue(v, depth + 1));
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
