/**
 * How much a JSON-RPC message from a client may hold, judged on its bytes before `JSON.parse`:
 * parsing megabytes of `[{},{},…]` alone takes seconds and gigabytes, and every schema after it
 * walks each element. One pass over the bytes, stopping at the first value over a limit, so a
 * hostile line costs about as much as reading it. Free of zod, so the relay can use it too.
 */
import { MAX_PARAMS } from './limits.js';

/** Array elements plus object members in one message, at every depth (the SDK counts tool arguments alike). */
export const MAX_MESSAGE_VALUES = 10_000;
/** Arrays and objects nested in one another in one message; a tool call's arguments need four. */
export const MAX_MESSAGE_DEPTH = 32;
/**
 * Array elements plus object members in one tool call's arguments (the SDK's `maxToolInputElements`):
 * run_query's 1000 parameter values and its other arguments, with room to spare.
 */
export const MAX_TOOL_INPUT_VALUES = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The index of the quote that ends the string whose opening quote is at `start`, else -1. */
function stringEnd(bytes: Uint8Array, start: number): number {
  let i = start;
  for (;;) {
    i = bytes.indexOf(QUOTE, i + 1);
    if (i < 0) return -1;
    let k = i - 1;
    while (bytes[k] === BACKSLASH) k--;
    if ((i - 1 - k) % 2 === 0) return i; // an even run of backslashes escapes only itself
  }
}

/**
 * Why the JSON text in `bytes` holds more than a message may (which limit, in words), else
 * undefined. Malformed JSON is left to `JSON.parse`; only what it would build is counted.
 */
export function overBounds(bytes: Uint8Array, maxValues = MAX_MESSAGE_VALUES, maxDepth = MAX_MESSAGE_DEPTH): string | undefined {
  let depth = 0;
  let values = 0;
  let opened = false; // the last significant byte opened an array or object
  const over = () => `holds more than ${maxValues} values (array elements and object members)`;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (isSpace(c)) continue;
    if (opened && c !== CLOSE_ARRAY && c !== CLOSE_OBJECT && ++values > maxValues) return over(); // a first element
    opened = false;
    if (c === QUOTE) {
      i = stringEnd(bytes, i);
      if (i < 0) return undefined;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return `nests arrays and objects more than ${maxDepth} deep`;
      opened = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COMMA && depth > 0 && ++values > maxValues) {
      return over();
    }
  }
  return undefined;
}

/**
 * The top-level members `names` of the JSON object in `bytes` whose values are no array or
 * object (a request's `id` and `method`), read without parsing the rest: what an answer to a
 * refused message needs. One pass; a member it cannot read is left out.
 */
export function topLevelScalars(bytes: Uint8Array, names: readonly string[]): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const text = (from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('utf8');
  let depth = 0;
  let key: string | undefined; // the member whose value comes next, at depth 1
  let valueStart = -1;
  const settle = (end: number) => {
    if (key !== undefined && valueStart >= 0 && names.includes(key)) {
      try {
        found[key] = JSON.parse(text(valueStart, end));
      } catch {}
    }
    [key, valueStart] = [undefined, -1];
  };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end < 0) break;
      if (depth === 1 && key === undefined) {
        try {
          key = JSON.parse(text(i, end + 1)) as string;
        } catch {
          break;
        }
      } else if (depth === 1 && valueStart < 0) valueStart = i;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && key !== undefined) key = undefined; // a container: not read
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 1) settle(i);
      if (--depth === 0) break;
    } else if (depth === 1 && c === COMMA) {
      settle(i);
    } else if (depth === 1 && key !== undefined && valueStart < 0 && c !== 0x3a && !isSpace(c)) {
      valueStart = i;
    }
  }
  return found;
}

/** The answer's text for a message `overBounds` refused (`why` is what it said). */
export function boundsRefusal(why: string): string {
  return `Invalid params: the message ${why}, over what one message may carry (at most ${MAX_MESSAGE_VALUES} values, nested at most ${MAX_MESSAGE_DEPTH} deep; a tool call's arguments at most ${MAX_TOOL_INPUT_VALUES} values), so it was not read. Send fewer values: run_query takes at most ${MAX_PARAMS} parameter values.`;
}
