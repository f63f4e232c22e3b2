import type { LexicalSyntax, QuoteRule } from './dialects.js';
import type { Token } from './types.js';

/** Tokens of a whole input, or where it ended inside a literal or comment. */
export interface Lexed {
  readonly tokens: readonly Token[];
  /** What was still open at the end of the input, e.g. `a string literal`. */
  readonly unterminated?: string;
  /** Text whose reading depends on something the policy cannot know; says what, for the refusal. */
  readonly ambiguous?: string;
  /** The input holds a versioned executable comment, whose body is code or comment by server version. */
  readonly versioned?: boolean;
  /** A NUL character outside a literal (or inside a comment), where engines stop reading early. */
  readonly nul?: boolean;
  /** The text has more tokens than the caller's bound; lexing stopped there. */
  readonly tooMany?: boolean;
  /** A block comment nests deeper than MAX_COMMENT_DEPTH; lexing stopped there. */
  readonly commentTooDeep?: boolean;
  /** Deepest parenthesis nesting. */
  readonly depth: number;
  /**
   * The work PostgreSQL's scanner spends on runs of operator characters outside literals (see
   * OPERATOR_CHARS): for each such character, how many came right before it in its run. The
   * scanner matches the longest run of them at every token start (`/*` and `--` inside, a trailing
   * `+` or `-`, cut the token short), so a run of n characters costs it about n²/2. Counted up to
   * 2^30.
   */
  readonly operatorWork: number;
}

const code = (sql: string, i: number): number => sql.charCodeAt(i);
/** PostgreSQL's op_chars (scan.l): `~!@#^&|\`?+-*\/%<>=`, by character code. */
const OPERATOR_CHARS = new Uint8Array(128);
for (const ch of '~!@#^&|`?+-*/%<>=') OPERATOR_CHARS[ch.charCodeAt(0)] = 1;
/** Where Lexed.operatorWork stops counting: far past any limit on it, and within a small integer. */
const OPERATOR_WORK_CAP = 1 << 30;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/** Every engine's identifier start: an ASCII letter, `_`, or any non-ASCII character (PostgreSQL's `\200-\377`). */
const isWordStart = (c: number): boolean => isLetter(c) || c === 0x5f || c >= 0x80;
const isWordPart = (c: number): boolean => isWordStart(c) || isDigit(c) || c === 0x24;
/** PostgreSQL's dolq_start / dolq_cont: no `$` inside a tag. */
const isTagPart = (c: number): boolean => isWordStart(c) || isDigit(c);
/** Upper-cases ASCII letters only, as the engines fold keywords (`ſ` must not become `S`). */
const upperAscii = (text: string): string =>
  /[^\0-\x7f]/.test(text) ? text.replace(/[a-z]+/g, (s) => s.toUpperCase()) : text.toUpperCase();

function wordEnd(sql: string, i: number): number {
  let j = i + 1;
  while (j < sql.length && isWordPart(code(sql, j))) j++;
  return j;
}

/** Where the number at `i` ends; with `dotDot`, before a `..` (MariaDB MY_LEX_INT_OR_REAL: `1..2` is 1, `..`, 2). */
function numberEnd(sql: string, i: number, dotDot = false): number {
  let j = i;
  while (isDigit(code(sql, j))) j++;
  if (sql[j] === '.' && !(dotDot && sql[j + 1] === '.')) for (j++; isDigit(code(sql, j)); ) j++;
  if ((sql[j] === 'e' || sql[j] === 'E') && (isDigit(code(sql, j + 1)) || (/[+-]/.test(sql[j + 1] ?? '') && isDigit(code(sql, j + 2))))) {
    for (j += 2; isDigit(code(sql, j)); ) j++;
  }
  return j;
}

const isHexDigit = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * MariaDB's MY_LEX_NUMBER_IDENT (sql_lex.cc) at the digit `i`: where the number or the identifier
 * starting there ends, and which it is. `0x` with hex digits, `0b` with binary digits, digits with
 * an exponent (`1e5`, `1e+5`), and digits not followed by an identifier character are numbers;
 * anything else that goes on with identifier characters (`2v`, `1e`, `0x1g`, `0X1F`) is a name,
 * and so is `0x` or `0b` alone (MariaDB 10.11: `SELECT 0x` is an unknown column `0x`).
 */
function mariadbNumberOrName(sql: string, i: number, dotDot: boolean): { readonly end: number; readonly name: boolean } {
  const c1 = sql[i + 1];
  if (sql[i] === '0' && (c1 === 'x' || c1 === 'b')) {
    let j = i + 2;
    while (c1 === 'x' ? isHexDigit(code(sql, j)) : sql[j] === '0' || sql[j] === '1') j++;
    if (j - i >= 3 && !isWordPart(code(sql, j))) return { end: j, name: false };
    return { end: wordEnd(sql, i), name: true };
  }
  let j = i;
  while (isDigit(code(sql, j))) j++;
  if (!isWordPart(code(sql, j))) return { end: numberEnd(sql, i, dotDot), name: false };
  if ((sql[j] === 'e' || sql[j] === 'E') && (isDigit(code(sql, j + 1)) || (/[+-]/.test(sql[j + 1] ?? '') && isDigit(code(sql, j + 2))))) {
    for (j += 2; isDigit(code(sql, j)); ) j++;
    return { end: j, name: false };
  }
  return { end: wordEnd(sql, i), name: true };
}

/** The `$tag$` opening at `i` (PostgreSQL dolqdelim), or undefined. */
function dollarTag(sql: string, i: number): string | undefined {
  let j = i + 1;
  if (sql[j] !== '$') {
    if (!isWordStart(code(sql, j))) return undefined;
    while (isTagPart(code(sql, j))) j++;
    if (sql[j] !== '$') return undefined;
  }
  return sql.slice(i, j + 1);
}

/**
 * The deepest block-comment nesting accepted (PostgreSQL's block comments nest). No person
 * nests comments this deep, and the server's own scanner was seen to spend minutes on a
 * megabyte of them, so deeper text is refused before it reaches the server.
 */
export const MAX_COMMENT_DEPTH = 64;

/** Index after a block comment opened at `i`, -1 when it never closes, -2 when it nests deeper than MAX_COMMENT_DEPTH. */
function blockEnd(sql: string, i: number, nested: boolean): number {
  let depth = 0;
  const last = sql.length - 1;
  for (let j = i; j < last; j++) {
    const c = code(sql, j);
    if (c === 0x2f && code(sql, j + 1) === 0x2a && (nested || depth === 0)) {
      if (++depth > MAX_COMMENT_DEPTH) return -2;
      j++;
    } else if (c === 0x2a && code(sql, j + 1) === 0x2f) {
      if (--depth === 0) return j + 2;
      j++;
    }
  }
  return -1;
}

/** Index after the literal opened at `i`, or -1. A doubled closer is an escaped one unless `single`. */
function quotedEnd(sql: string, i: number, rule: QuoteRule, single: boolean): number {
  for (let j = i + 1; j < sql.length; j++) {
    const c = sql[j];
    if (rule.backslash && c === '\\') j++;
    else if (c === rule.close) {
      if (!single && (rule.close !== ']' || rule.doubled) && sql[j + 1] === rule.close) j++;
      else return j + 1;
    }
  }
  return -1;
}

/**
 * sql[from, to) with each doubled `close` made single (as replaceAll would), in one pass over
 * UTF-16 code units: replaceAll on a slice of a long text, or joining its pieces, was seen to cost
 * 100 ms on a megabyte of ''.
 */
function undouble(sql: string, from: number, to: number, close: string): string {
  const body = sql.slice(from, to);
  // Searched in the literal only: a search of the rest of the text per literal would be quadratic.
  const at = body.indexOf(close + close);
  if (at < 0) return body;
  const first = from + at;
  const quote = close.charCodeAt(0);
  const units = new Uint16Array(to - first);
  let w = 0;
  for (let j = first; j < to; j++) {
    const c = sql.charCodeAt(j);
    units[w++] = c;
    if (c === quote && j + 1 < to && sql.charCodeAt(j + 1) === quote) j++;
  }
  // Node's utf16le decoding keeps every code unit as it is, lone surrogates included.
  return body.slice(0, at) + Buffer.from(units.buffer, 0, w * 2).toString('utf16le');
}

/** SQLite's `$name`, `@name`, `:name`, `#name` with Tcl's `::` and `(...)` suffixes (tokenize.c). */
function tclVariableEnd(sql: string, i: number): number {
  let j = i + 1;
  let n = 0;
  while (j < sql.length) {
    const c = code(sql, j);
    if (isWordPart(c)) {
      n++;
      j++;
    } else if (sql[j] === '(' && n > 0) {
      const close = /[\s)]/g;
      close.lastIndex = j;
      const m = close.exec(sql);
      return m && m[0] === ')' ? m.index + 1 : -1;
    } else if (sql[j] === ':' && sql[j + 1] === ':') j += 2;
    else break;
  }
  return n > 0 ? j : i;
}

/**
 * MySQL's executable-comment mark after `/*` at `i` (`!`, `!NNNNN`, `!NNNNNN`, `M!...`), as
 * `/^(M?)!(\d{5}\d?)?/` would match it (its length), without slicing or a regex per comment: a
 * megabyte can hold tens of thousands of comments. `versioned` when it has `M` or a version.
 */
function executableMark(sql: string, i: number): { readonly length: number; readonly versioned: boolean } | undefined {
  let j = i;
  const maria = sql[j] === 'M';
  if (maria) j++;
  if (sql[j] !== '!') return undefined;
  j++;
  let digits = 0;
  while (digits < 6 && isDigit(code(sql, j + digits))) digits++;
  const version = digits >= 5 ? digits : 0;
  const end = j + version;
  return { length: end - i, versioned: maria || version > 0 };
}

/** Whether sql holds `text` at `at`: a loop over a few characters, cheaper here than startsWith. */
function sameAt(sql: string, at: number, text: string): boolean {
  for (let k = 0; k < text.length; k++) if (code(sql, at + k) !== code(text, k)) return false;
  return true;
}

/** Whether `/*` starts anywhere in sql[from, to): a scan, not a slice, per versioned comment. */
function opensComment(sql: string, from: number, to: number): boolean {
  for (let j = from; j + 1 < to; j++) if (code(sql, j) === 0x2f && code(sql, j + 1) === 0x2a) return true;
  return false;
}

/** Shared punctuation tokens: most tokens of a long text are punctuation, and tokens are never changed. */
const PUNCT = new Map<string, Token>();
function punct(char: string, spaced: boolean): Token {
  const key = spaced ? ` ${char}` : char;
  let token = PUNCT.get(key);
  if (!token) {
    token = Object.freeze({ kind: 'punct', text: char, shown: char, spaced, opaque: false });
    if (char.length === 1) PUNCT.set(key, token);
  }
  return token;
}

const OPEN = { string: 'a string literal', quoted: 'a quoted identifier' } as const;

/** Each syntax's whitespace as a table by character code (all of it is ASCII): one lookup per character. */
const SPACE_TABLES = new WeakMap<LexicalSyntax, Uint8Array>();
function spaceTable(syntax: LexicalSyntax): Uint8Array {
  let table = SPACE_TABLES.get(syntax);
  if (!table) {
    table = new Uint8Array(128);
    for (const ch of syntax.spaces) table[ch.charCodeAt(0)] = 1;
    SPACE_TABLES.set(syntax, table);
  }
  return table;
}

/**
 * Splits `sql` into tokens under one engine's lexical rules (at most `maxTokens` of them), following the engine's own scanner
 * (PostgreSQL scan.l, MariaDB sql_lex.cc, SQLite tokenize.c): comments dropped (except the bodies
 * of MySQL executable comments, which are code), each literal one token. Linear in the input;
 * never throws.
 */
export function lex(sql: string, syntax: LexicalSyntax, maxTokens = Number.POSITIVE_INFINITY): Lexed {
  const tokens: Token[] = [];
  let spaced = false;
  let executable = false;
  let versioned = false;
  let versionKey = '';
  let nul = false;
  let depth = 0;
  let deepest = 0;
  const hasNul = sql.includes('\0');
  let operatorWork = 0;
  let operatorRun = 0;
  let operatorEnd = -1;
  /** Counts the operator characters of sql[from, to) into operatorWork (a run goes on where the last one ended). */
  const operators = (from: number, to: number): void => {
    // Past OPERATOR_WORK_CAP the figure only says "far too much": it stays a small integer, cheap to add to.
    if (operatorWork >= OPERATOR_WORK_CAP) return;
    for (let j = from; j < to; j++) {
      const c = code(sql, j);
      if (c >= 128 || OPERATOR_CHARS[c] === 0) continue;
      operatorRun = j === operatorEnd ? operatorRun + 1 : 1;
      operatorEnd = j + 1;
      operatorWork += operatorRun;
    }
  };
  // Word tokens of this text, shared like PUNCT: a long text repeats the same few words, and
  // tokens are never changed. Bounded, so a text of distinct words costs no more than without it.
  // Numbers apart: on MariaDB a word may be all digits (`db.123`).
  const seen: Map<string, Token>[] = [new Map(), new Map(), new Map(), new Map()];
  const wordToken = (word: string, before: boolean, kind: 'word' | 'number' = 'word'): Token => {
    const cache = seen[(before ? 1 : 0) + (kind === 'number' ? 2 : 0)] as Map<string, Token>;
    let token = cache.get(word);
    if (!token) {
      token = { kind, text: kind === 'word' ? upperAscii(word) : word, shown: word, spaced: before, opaque: false };
      if (word.length <= 64 && cache.size < 4096) cache.set(word, token);
    }
    return token;
  };
  const push = (kind: Token['kind'], text: string, shown: string, opaque = false): void => {
    tokens.push({ kind, text, shown, spaced, opaque });
    spaced = false;
  };
  const done = (extra: Partial<Lexed> = {}): Lexed => ({
    tokens,
    depth: deepest,
    operatorWork,
    ...(versioned ? { versioned } : {}),
    ...(nul ? { nul } : {}),
    ...extra,
  });
  /** Pushes the literal opened at `i`; returns the index after it, or -1. */
  const literal = (i: number, rule: QuoteRule, opts: { opaque?: boolean; single?: boolean } = {}): number => {
    const end = quotedEnd(sql, i, rule, opts.single ?? false);
    if (end < 0) return end;
    const body = sql.slice(i + 1, end - 1);
    const text = (rule.close === ']' && !rule.doubled) || opts.single ? body : undouble(sql, i + 1, end - 1, rule.close);
    const opaque = (opts.opaque ?? false) || (rule.backslash && body.includes('\\'));
    push(rule.kind, text, rule.kind === 'string' ? "''" : '""', opaque);
    return end;
  };

  const spaces = spaceTable(syntax);
  const length = sql.length;
  let i = 0;
  while (i < length) {
    if (tokens.length >= maxTokens) return done({ tooMany: true });
    const first = code(sql, i);
    if (first < 128 && spaces[first] === 1) {
      // A run of whitespace at once: a megabyte of it is one loop of table lookups.
      i++;
      while (i < length && code(sql, i) < 128 && spaces[code(sql, i)] === 1) i++;
      spaced = true;
      continue;
    }
    const c = sql[i] ?? '';
    const next = sql[i + 1] ?? '';
    const after = code(sql, i + 2) || 0;
    const dash = c === '-' && next === '-' && (!syntax.dashCommentNeedsSpace || after <= 0x20 || after === 0x7f);
    if (dash || (c === '#' && syntax.hashComments)) {
      let j = i + (dash ? 2 : 1);
      const crEnds = syntax.lineCommentEnd !== 'lf';
      for (let at = code(sql, j); j < length && at !== 0x0a && at !== 0 && !(at === 0x0d && crEnds); at = code(sql, ++j));
      if (sql[j] === '\r' && sql[j + 1] !== '\n' && syntax.lineCommentEnd === 'unknown') {
        return done({ ambiguous: 'a line comment holding a carriage return' });
      }
      i = sql[j] === '\0' ? j : j + 1;
      spaced = true;
      continue;
    }
    if (c === '/' && next === '*') {
      const start = i;
      const mark = syntax.executableComments ? executableMark(sql, i + 2) : undefined;
      if (mark && executable) return done({ ambiguous: 'an executable comment inside another' });
      if (mark?.versioned) {
        // One version key means one server reading for all of them: all code, or all comments.
        const same = versionKey.length === mark.length && sameAt(sql, i + 2, versionKey);
        if (versioned && !same) return done({ ambiguous: 'executable comments with different versions' });
        if (!versioned) versionKey = sql.slice(i + 2, i + 2 + mark.length);
        versioned = true;
      }
      if (mark && (syntax.executableComments === 'code' || !mark.versioned)) {
        executable = true;
        i += 2 + mark.length;
      } else if (mark || (syntax.executableComments && sql[i + 2] === '+')) {
        const close = sql.indexOf('*/', i + 2);
        if (mark && close >= 0 && opensComment(sql, i + 2, close)) return done({ ambiguous: 'a comment inside a versioned comment' });
        if (!mark && close >= 0 && /['"`]/.test(sql.slice(i + 2, close))) return done({ ambiguous: 'a quote inside an optimizer hint' });
        i = mark ? (close < 0 ? -1 : close + 2) : blockEnd(sql, i, syntax.nestedComments);
      } else {
        i = blockEnd(sql, i, syntax.nestedComments);
      }
      if (i === -2) return done({ commentTooDeep: true });
      if (i < 0) return done({ unterminated: 'a /* comment' });
      operators(start, i);
      // Most texts hold no NUL at all: then no comment needs looking through for one.
      if (hasNul && !nul) {
        const at = sql.indexOf('\0', start);
        nul = at >= 0 && at < i;
      }
      spaced = true;
      continue;
    }
    if (executable && c === '*' && next === '/') {
      executable = false;
      i += 2;
      spaced = true;
      continue;
    }
    const quote = syntax.quotes[c];
    if (quote) {
      i = literal(i, quote);
      if (i < 0) return done({ unterminated: OPEN[quote.kind] });
      continue;
    }
    if (c === '$' && syntax.dollarQuotes) {
      const tag = dollarTag(sql, i);
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length);
        if (close < 0) return done({ unterminated: `a ${tag}-quoted string` });
        push('string', sql.slice(i + tag.length, close), "''");
        i = close + tag.length;
        continue;
      }
    }
    if (syntax.tclVariables && '$@:#'.includes(c)) {
      const end = tclVariableEnd(sql, i);
      if (end < 0) return done({ unterminated: 'a $name(...) parameter' });
      if (end > i) {
        push('punct', '?', sql.slice(i, end));
        i = end;
        continue;
      }
    }
    if (syntax.mariadbTokens && c === '@') {
      // MY_LEX_USER_END: `@@` (a system variable, MY_LEX_SYSTEM_VAR) and `@` before a quote read
      // on as usual; otherwise MY_LEX_HOSTNAME takes every ASCII letter, digit, `.`, `_` and `$`
      // after it as one name, so `@a. INTO` is the variable `a.` and the keyword INTO.
      operators(i, i + 1);
      tokens.push(punct('@', spaced));
      spaced = false;
      i++;
      if (next === '@') {
        operators(i, i + 1);
        tokens.push(punct('@', false));
        i++;
      } else if (next !== "'" && next !== '"' && next !== '`') {
        let j = i;
        while (j < length && (isLetter(code(sql, j)) || isDigit(code(sql, j)) || '._$'.includes(sql[j] as string))) j++;
        // my_isalnum of the connection's character set decides whether the name goes on there.
        if (code(sql, j) >= 0x80)
          return done({ ambiguous: 'a non-ASCII character right after `@`, where a variable name ends by character set' });
        if (j > i) tokens.push(wordToken(sql.slice(i, j), false));
        i = j;
      }
      continue;
    }
    if (syntax.mariadbTokens && c === '\\' && next === 'N') {
      // MY_LEX_ESCAPE: `\N` is NULL, a token of its own (`\Ninto` is NULL INTO).
      tokens.push({ kind: 'word', text: 'NULL', shown: '\\N', spaced, opaque: false });
      spaced = false;
      i += 2;
      continue;
    }
    if (syntax.mariadbTokens && c === '.' && next === '.') {
      // MY_LEX_REAL_OR_POINT: DOT_DOT_SYM, after which a word is looked up as a keyword.
      operators(i, i + 2);
      tokens.push(punct('..', spaced));
      spaced = false;
      i += 2;
      continue;
    }
    if (syntax.mariadbIdentifiers && c === '.') {
      // MY_LEX_IDENT_SEP: a dot right after a name, or one not followed by a digit, is a
      // separator, and the identifier characters right after it are a name, a keyword's or
      // digits' too (`db.order`, `db.1e5v`); a dot before a digit elsewhere starts a number.
      const afterName = !spaced && tokens.at(-1)?.kind === 'word';
      if (afterName || !isDigit(code(sql, i + 1))) {
        operators(i, i + 1);
        tokens.push(punct('.', spaced));
        spaced = false;
        i++;
        if (i < length && isWordPart(code(sql, i))) {
          const end = wordEnd(sql, i);
          tokens.push(wordToken(sql.slice(i, end), false));
          i = end;
        }
        continue;
      }
    }
    if (syntax.mariadbIdentifiers && (isDigit(code(sql, i)) || c === '$')) {
      const { end, name } = c === '$' ? { end: wordEnd(sql, i), name: true } : mariadbNumberOrName(sql, i, syntax.mariadbTokens === true);
      tokens.push(wordToken(sql.slice(i, end), spaced, name ? 'word' : 'number'));
      spaced = false;
      i = end;
      continue;
    }
    if (isWordStart(code(sql, i))) {
      const end = wordEnd(sql, i);
      const word = sql.slice(i, end);
      const prefix = end === i + 1 ? c.toUpperCase() : '';
      if (prefix && syntax.hexPrefixes.includes(prefix) && next === "'") {
        // B'...' and X'...' end at the first quote: no doubling (scan.l xb/xh, tokenize.c blobs).
        i = literal(i + 1, { close: "'", kind: 'string', backslash: false }, { single: true });
        if (i < 0) return done({ unterminated: OPEN.string });
        continue;
      }
      if (prefix === 'E' && syntax.escapePrefixes && next === "'") {
        i = literal(i + 1, { close: "'", kind: 'string', backslash: true });
        if (i < 0) return done({ unterminated: OPEN.string });
        continue;
      }
      const unicode = sql[i + 2];
      if (prefix === 'U' && syntax.escapePrefixes && next === '&' && (unicode === "'" || unicode === '"')) {
        // U&'...' and U&"...": doubling only; their escapes (and UESCAPE) can spell anything.
        const rule: QuoteRule = { close: unicode, kind: unicode === "'" ? 'string' : 'quoted', backslash: false };
        i = literal(i + 2, rule, { opaque: true });
        if (i < 0) return done({ unterminated: OPEN[rule.kind] });
        continue;
      }
      tokens.push(wordToken(word, spaced));
      spaced = false;
      i = end;
      continue;
    }
    if (isDigit(code(sql, i)) || (c === '.' && isDigit(code(sql, i + 1)))) {
      const end = numberEnd(sql, i, syntax.mariadbTokens === true);
      // Numbers share the words' cache: a word never starts with a digit or a dot, so no key is both.
      tokens.push(wordToken(sql.slice(i, end), spaced, 'number'));
      spaced = false;
      i = end;
      continue;
    }
    if (c === '\0') nul = true;
    if (c === '(') deepest = Math.max(deepest, ++depth);
    else if (c === ')') depth--;
    const char = code(sql, i) < 0xd800 ? c : String.fromCodePoint(sql.codePointAt(i) ?? 0);
    operators(i, i + 1);
    tokens.push(punct(char, spaced));
    spaced = false;
    i += char.length;
  }
  return executable ? done({ unterminated: 'a /*! comment' }) : done();
}

/**
 * Whether two readings of one text came out the same: the same tokens (kind, text, spacing,
 * escapes) and the same findings. Then every rule that looks only at tokens judges them alike.
 */
export function sameReading(a: Lexed, b: Lexed): boolean {
  if (
    a.tokens.length !== b.tokens.length ||
    a.unterminated !== b.unterminated ||
    a.ambiguous !== b.ambiguous ||
    a.versioned !== b.versioned ||
    a.nul !== b.nul ||
    a.tooMany !== b.tooMany ||
    a.commentTooDeep !== b.commentTooDeep ||
    a.depth !== b.depth ||
    a.operatorWork !== b.operatorWork
  )
    return false;
  for (let k = 0; k < a.tokens.length; k++) {
    const x = a.tokens[k] as Token;
    const y = b.tokens[k] as Token;
    if (x !== y && (x.kind !== y.kind || x.text !== y.text || x.shown !== y.shown || x.spaced !== y.spaced || x.opaque !== y.opaque))
      return false;
  }
  return true;
}
