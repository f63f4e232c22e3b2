import type { JsonValue } from '../../shared/schemas.js';

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

const isQuote = (text: string, at: number): boolean => text[at] === "'" || text[at] === '"' || text[at] === '`' || dollarQuote(text, at);

/** A quoted value masked with its quotes kept: `'x'` -> `'***'`. */
function maskedQuote(text: string, at: number): string {
  const open = text[at] as string;
  if (open !== '$') return `${open}${MASK}${open}`;
  const tag = text.slice(at, text.indexOf('$', at + 1) + 1);
  return `${tag}${MASK}${tag}`;
}

/**
 * After the word PASSWORD ending at `at`: the extent [start, end) of its value and how to show it
 * masked, or undefined when what follows is no value (`SET PASSWORD FOR`, a column named password).
 */
function passwordValue(text: string, at: number): { start: number; end: number; shown: string } | undefined {
  let i = at;
  // A key in quotes (`"password": "x"`, `'password'=>'x'`): the closing quote belongs to the key.
  if ((text[i] === '"' || text[i] === "'" || text[i] === '`') && !isQuote(text, i + 1)) i++;
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
    const end = quotedEnd(text, i);
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
    const end = quotedEnd(text, i);
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
export function maskCellValue(value: JsonValue): JsonValue {
  if (typeof value === 'string') return maskSecretText(value);
  if (Array.isArray(value)) return value.map(maskCellValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = SECRET_KEYS.has(key.toLowerCase()) && inner !== null && inner !== '' ? MASK : maskCellValue(inner);
    }
    return out;
  }
  return value;
}
