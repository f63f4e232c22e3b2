import type { JsonValue } from '../../shared/schemas.js';
import { deepValueText, MAX_VALUE_DEPTH, setCell } from './values.js';

/**
 * The layer behind the statement policy: whatever route a statement found, a password hash or a
 * password written in statement text is masked in every cell before it leaves the driver. Cells of
 * every engine go through `maskCellValue`; text anywhere in a cell is searched (a hash inside XML,
 * JSON or an options array is masked as a substring). Hand-written scanning, linear in the text:
 * each trigger is found once and the scan continues after what it masked.
 *
 * Masked:
 * - hash shapes: PostgreSQL `SCRAM-SHA-256$...` and `md5` + 32 hex digits, MySQL `*` + 40 hex digits;
 * - the quoted value after PASSWORD (`PASSWORD 'x'`, `ENCRYPTED PASSWORD "x"`, `PASSWORD('x')`,
 *   `MASTER_PASSWORD='x'`, `OPTIONS (password 'x')`, `PASSWORD $$x$$`);
 * - every quoted value after `IDENTIFIED BY|VIA|WITH` to the end of the text;
 * - the value of `password=` (connection strings, user-mapping and server options), quoted or not;
 * - in a JSON object, the value of a key named password, passwd or authentication_string.
 */
export const MASK = '***';
const HASH_HIDDEN = '*** (password hash hidden)';

/** What starts a masking decision; each alternative has a fixed shape, so a failed try is cheap. */
const TRIGGER =
  /password|authentication_string|identified\s+(?:by|via|with)\b|scram-sha-256\$|md5[0-9a-f]{32}(?![0-9a-f])|\*[0-9a-f]{40}(?![0-9a-f])/gi;
/** Characters of a SCRAM verifier after its `SCRAM-SHA-256$` prefix (base64, iterations, separators). */
const SCRAM_CHAR = /[A-Za-z0-9+/=:$]/;
const SECRET_KEYS = new Set(['password', 'passwd', 'authentication_string', 'rolpassword', 'umoptions', 'srvoptions', 'subconninfo']);

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);

/** Where the quoted text starting at `at` (its opening quote) ends, exclusive; the text's end when unterminated. */
function quotedEnd(text: string, at: number): number {
  const open = text[at] as string;
  if (open === '$') {
    const close = text.indexOf('$', at + 1);
    if (close < 0) return text.length;
    const tag = text.slice(at, close + 1);
    const end = text.indexOf(tag, close + 1);
    return end < 0 ? text.length : end + tag.length;
  }
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === open) {
      if (text[i + 1] === open) i++;
      else return i + 1;
    }
  }
  return text.length;
}

/** Whether `$` at `at` opens a dollar quote (`$$` or `$tag$`). */
function dollarQuote(text: string, at: number): boolean {
  if (text[at] !== '$') return false;
  for (let i = at + 1; i < text.length && i < at + 64; i++) {
    const c = text[i];
    if (c === '$') return true;
    if (!isWordChar(c)) return false;
  }
  return false;
}

const isQuoteChar = (c: string | undefined): boolean => c === "'" || c === '"' || c === '`';
/** A quoting run: the quote characters and backslashes that open a value, at most 32 of them. */
function quotingRun(text: string, at: number): string {
  let end = at;
  while (end < text.length && end < at + 32 && (isQuoteChar(text[end]) || text[end] === '\\')) end++;
  return text.slice(at, end);
}

/**
 * Whether the value at `at` is quoted inside quoted text: `''x''` (doubled), `\\'x\\'` (backslash),
 * `x` or `\\\\\\'x\\\\\\'` (two levels), and their mixes, in any quote kind.
 */
function nestedQuote(text: string, at: number): boolean {
  const c = text[at];
  if (c === '\\') return isQuoteChar(quotingRun(text, at).slice(-1));
  return isQuoteChar(c) && text[at + 1] === c;
}

const isQuote = (text: string, at: number): boolean => isQuoteChar(text[at]) || dollarQuote(text, at) || nestedQuote(text, at);

/** How far a nested value is looked for; past it the rest of the text is masked (more rather than less). */
const NESTED_WINDOW = 256;

/** A character of a decoded quoting level, with where its encoding starts in the original text. */
type Decoded = { c: string; at: number };

/** A stream of characters with lookahead; `end` is where reading stopped in the original text. */
class Level {
  private readonly buffered: Decoded[] = [];
  constructor(
    private readonly produce: () => Decoded | undefined,
    readonly end: () => number,
  ) {}
  peek(k = 0): Decoded | undefined {
    while (this.buffered.length <= k) {
      const next = this.produce();
      if (!next) return undefined;
      this.buffered.push(next);
    }
    return this.buffered[k];
  }
  take(): Decoded | undefined {
    const next = this.peek();
    if (next) this.buffered.shift();
    return next;
  }
}

/** The original text from `from` to `limit`, as a Level. */
function rawLevel(text: string, from: number, limit: number): Level {
  let i = from;
  return new Level(
    () => (i < limit ? { c: text[i] as string, at: i++ } : undefined),
    () => i,
  );
}

/**
 * One quoting level of `below` undone, read lazily: `qq` -> `q`, and `\x` -> `x` on a level that
 * opened with a backslash (on a doubled level a backslash is the text's own). A lone `stop` quote
 * (not the first character) closes the enclosing string, so the level ends there.
 */
function unquoteLevel(below: Level, stop: string, backslashes: boolean): Level {
  let count = 0;
  let stoppedAt: number | undefined;
  const produce = (): Decoded | undefined => {
    if (stoppedAt !== undefined) return undefined;
    const first = below.peek();
    if (!first) return undefined;
    const second = below.peek(1);
    if ((backslashes && first.c === '\\' && second) || (isQuoteChar(first.c) && second?.c === first.c)) {
      below.take();
      below.take();
      count++;
      return { c: (second as Decoded).c, at: first.at };
    }
    if (first.c === stop && count > 0) {
      stoppedAt = first.at;
      return undefined;
    }
    below.take();
    count++;
    return first;
  };
  return new Level(produce, () => stoppedAt ?? below.end());
}

/**
 * Where a value quoted inside quoted text ends, exclusive: quoting levels are undone (lazily, so
 * the cost is the value's length times its depth) until the value opens with one quote, which is
 * then read as a plain quoted value. Where the enclosing string closes first, the value ends there;
 * where no end is found within NESTED_WINDOW characters, at the text's end.
 */
function nestedQuoteEnd(text: string, from: number): number {
  const stop = quotingRun(text, from).slice(-1);
  let level = rawLevel(text, from, Math.min(text.length, from + NESTED_WINDOW));
  for (let depth = 0; depth < 8; depth++) {
    const open = level.peek();
    const next = level.peek(1);
    if (!open || !next) break;
    if (isQuoteChar(open.c) && next.c !== open.c && next.c !== '\\') {
      level.take();
      for (let c = level.take(); c; c = level.take()) {
        if (c.c === '\\') level.take();
        else if (c.c === open.c) {
          if (level.peek()?.c === open.c) level.take();
          else return level.peek()?.at ?? level.end();
        }
      }
      break;
    }
    level = unquoteLevel(level, stop, open.c === '\\');
  }
  const stopped = level.end();
  return level.peek() === undefined && stopped < text.length && isQuoteChar(text[stopped]) ? stopped : text.length;
}

/** A quoted value masked with its quotes kept: `'x'` -> `'***'`, `''x''` -> `''***''`. */
function maskedQuote(text: string, at: number): string {
  const open = text[at] as string;
  if (nestedQuote(text, at)) {
    const run = quotingRun(text, at);
    const opener = open === '\\' ? run : run.slice(0, 2);
    return `${opener}${MASK}${opener}`;
  }
  if (open !== '$') return `${open}${MASK}${open}`;
  const tag = text.slice(at, text.indexOf('$', at + 1) + 1);
  return `${tag}${MASK}${tag}`;
}

/** Where the quoted value at `at` ends, exclusive, whatever its quoting (plain, dollar or nested). */
function valueEnd(text: string, at: number): number {
  return nestedQuote(text, at) ? nestedQuoteEnd(text, at) : quotedEnd(text, at);
}

/**
 * After the word PASSWORD ending at `at`: the extent [start, end) of its value and how to show it
 * masked, or undefined when what follows is no value (`SET PASSWORD FOR`, a column named password).
 */
function passwordValue(text: string, at: number): { start: number; end: number; shown: string } | undefined {
  let i = at;
  // A key in quotes (`"password": "x"`, `'password'=>'x'`): the closing quote belongs to the key.
  const keyClose = quotingRun(text, i);
  if (keyClose && /^\s*[:=]/.test(text.slice(i + keyClose.length, i + keyClose.length + 8))) i += keyClose.length;
  else if (isQuoteChar(text[i]) && !isQuote(text, i + 1)) i++;
  while (isSpace(text[i])) i++;
  // `SET PASSWORD FOR 'u'@'h' = ...`: the value follows the account, after `=` (looked for nearby only).
  if (/^for\s/i.test(text.slice(i, i + 4))) {
    const equals = text.indexOf('=', i);
    if (equals > 0 && equals - i < 512) i = equals;
  }
  let assigned = false;
  if (text[i] === '=' || text[i] === ':') {
    assigned = true;
    i++;
    if (text[i] === '>') i++;
  }
  while (isSpace(text[i])) i++;
  if (text[i] === '(') {
    i++;
    while (isSpace(text[i])) i++;
  }
  if ((text[i] === 'E' || text[i] === 'e') && text[i + 1] === "'") i++;
  if (i < text.length && isQuote(text, i)) {
    const end = valueEnd(text, i);
    return { start: i, end, shown: maskedQuote(text, i) };
  }
  // `= PASSWORD('x')`: the next PASSWORD is a trigger of its own.
  if (!assigned || i >= text.length || /^password/i.test(text.slice(i, i + 8))) return undefined;
  // An unquoted value after `password=`: up to whitespace or a quote that closes an enclosing
  // string or array element; more is masked rather than less.
  let end = i;
  while (end < text.length && !isSpace(text[end]) && text[end] !== '"' && text[end] !== "'") {
    if (text[end] === '\\') end++;
    end++;
  }
  return end > i ? { start: i, end: Math.min(end, text.length), shown: MASK } : undefined;
}

/** Every quoted value from `from` to the end, masked (after IDENTIFIED BY|VIA|WITH). */
function maskQuotesFrom(text: string, from: number): string {
  let out = '';
  let last = from;
  for (let i = from; i < text.length; i++) {
    if (!isQuote(text, i)) continue;
    const end = valueEnd(text, i);
    out += text.slice(last, i) + maskedQuote(text, i);
    last = end;
    i = end - 1;
  }
  return out + text.slice(last);
}

/** `text` with every credential shape masked; the same string when there is none. */
export function maskSecretText(text: string): string {
  TRIGGER.lastIndex = 0;
  if (!TRIGGER.test(text)) return text;
  TRIGGER.lastIndex = 0;
  let out = '';
  let last = 0;
  for (let match = TRIGGER.exec(text); match; match = TRIGGER.exec(text)) {
    const found = match[0].toLowerCase();
    const at = match.index;
    if (at < last) {
      TRIGGER.lastIndex = last;
      continue;
    }
    if (found.startsWith('identified')) return out + text.slice(last, at) + match[0] + maskQuotesFrom(text, at + match[0].length);
    if (found.startsWith('scram')) {
      let end = at + match[0].length;
      while (end < text.length && SCRAM_CHAR.test(text[end] as string)) end++;
      out += `${text.slice(last, at)}${HASH_HIDDEN}`;
      last = end;
    } else if (found.startsWith('md5') || found.startsWith('*')) {
      out += `${text.slice(last, at)}${HASH_HIDDEN}`;
      last = at + match[0].length;
    } else {
      // PASSWORD or authentication_string: the value that follows it, if any.
      const value = passwordValue(text, at + match[0].length);
      if (value) {
        out += text.slice(last, value.start) + value.shown;
        last = value.end;
      }
    }
    TRIGGER.lastIndex = Math.max(last, at + match[0].length);
  }
  return out + text.slice(last);
}

/** A cell value with credentials masked in every string it holds (arrays and JSON objects included). */
export function maskCellValue(value: JsonValue, depth = 0): JsonValue {
  if (typeof value === 'string') return maskSecretText(value);
  // Past the depth kept as structure, the rest is text, masked as text (a "password": "…" pair included).
  if (value !== null && typeof value === 'object' && depth >= MAX_VALUE_DEPTH) return maskSecretText(deepValueText(value));
  if (Array.isArray(value)) return value.map((inner) => maskCellValue(inner, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, inner] of Object.entries(value)) {
      setCell(out, key, SECRET_KEYS.has(key.toLowerCase()) && inner !== null && inner !== '' ? MASK : maskCellValue(inner, depth + 1));
    }
    return out;
  }
  return value;
}
