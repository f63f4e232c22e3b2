import type { LexicalSyntax, QuoteRule } from './dialects.js';
import type { Token } from './types.js';

/** Tokens of a whole input, or where it ended inside a literal or comment. */
export interface Lexed {
  readonly tokens: readonly Token[];
  /** What was still open at the end of the input, e.g. `a string literal`. */
  readonly unterminated?: string;
}

const SPACE = /\s+/y;
const WORD = /[\p{L}_][\p{L}\p{M}\p{N}_$]*/uy;
// Digits only: a letter after a number starts a new word, so `1sleep(5)` still shows `sleep(`.
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const DOLLAR_TAG = /\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/uy;
const EXECUTABLE_MARK = /M?!\d*/y;

function at(pattern: RegExp, sql: string, i: number): string | undefined {
  pattern.lastIndex = i;
  return pattern.exec(sql)?.[0];
}

/** Index after a line comment. Ends at CR as well as LF: revealing more code is the safe side. */
function lineEnd(sql: string, i: number): number {
  const match = /[\n\r]/g;
  match.lastIndex = i;
  return match.exec(sql) ? match.lastIndex : sql.length;
}

/** Index after the block comment opened at `i`, or -1 when it never closes. */
function blockEnd(sql: string, i: number, nested: boolean): number {
  let depth = 0;
  for (let j = i; j < sql.length - 1; j++) {
    if (sql[j] === '/' && sql[j + 1] === '*' && (nested || depth === 0)) {
      depth++;
      j++;
    } else if (sql[j] === '*' && sql[j + 1] === '/') {
      if (--depth === 0) return j + 2;
      j++;
    }
  }
  return -1;
}

/** Index after the literal opened at `i`, or -1. A doubled closer is an escaped one (not for `]`). */
function quotedEnd(sql: string, i: number, rule: QuoteRule): number {
  for (let j = i + 1; j < sql.length; j++) {
    const c = sql[j];
    if (rule.backslash && c === '\\') j++;
    else if (c === rule.close) {
      if (rule.close !== ']' && sql[j + 1] === rule.close) j++;
      else return j + 1;
    }
  }
  return -1;
}

/**
 * Splits `sql` into tokens under one engine's lexical rules: comments dropped (except MySQL
 * executable comments, whose body is code), each literal one token. Never throws.
 */
export function lex(sql: string, syntax: LexicalSyntax): Lexed {
  const tokens: Token[] = [];
  let spaced = false;
  let executable = false;
  const push = (kind: Token['kind'], text: string, shown: string, opaque = false): void => {
    tokens.push({ kind, text, shown, spaced, opaque });
    spaced = false;
  };
  const literal = (i: number, rule: QuoteRule, opaqueName: boolean): number => {
    const end = quotedEnd(sql, i, rule);
    if (end < 0) return end;
    const body = sql.slice(i + 1, end - 1);
    const text = rule.close === ']' ? body : body.replaceAll(rule.close + rule.close, rule.close);
    const opaque = opaqueName || (rule.backslash && body.includes('\\'));
    push(rule.kind, text, rule.kind === 'string' ? "''" : '""', opaque);
    return end;
  };

  let i = 0;
  while (i < sql.length) {
    const c = sql[i] ?? '';
    const next = sql[i + 1] ?? '';
    const space = at(SPACE, sql, i);
    const dashComment = c === '-' && next === '-' && (!syntax.dashCommentNeedsSpace || (sql.charCodeAt(i + 2) || 0) <= 0x20);
    if (space || dashComment || (c === '#' && syntax.hashComments)) {
      i = space ? i + space.length : lineEnd(sql, i);
      spaced = true;
      continue;
    }
    if (c === '/' && next === '*') {
      const mark = syntax.executableComments ? at(EXECUTABLE_MARK, sql, i + 2) : undefined;
      if (mark) executable = true;
      i = mark ? i + 2 + mark.length : blockEnd(sql, i, syntax.nestedComments);
      if (i < 0) return { tokens, unterminated: 'a /* comment' };
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
      const unicodeName =
        syntax.escapePrefixes && quote.kind === 'quoted' && /(?:^|[^\p{L}\p{N}_$])u&$/iu.test(sql.slice(Math.max(0, i - 3), i));
      i = literal(i, quote, unicodeName);
      if (i < 0) return { tokens, unterminated: quote.kind === 'string' ? 'a string literal' : 'a quoted identifier' };
      continue;
    }
    const tag = syntax.dollarQuotes ? at(DOLLAR_TAG, sql, i) : undefined;
    if (tag) {
      const close = sql.indexOf(tag, i + tag.length);
      if (close < 0) return { tokens, unterminated: `a ${tag}-quoted string` };
      push('string', sql.slice(i + tag.length, close), "''");
      i = close + tag.length;
      continue;
    }
    const word = at(WORD, sql, i);
    if (word && syntax.escapePrefixes && (word === 'E' || word === 'e') && next === "'") {
      i = literal(i + 1, { close: "'", kind: 'string', backslash: true }, false);
      if (i < 0) return { tokens, unterminated: 'a string literal' };
      continue;
    }
    const number = word ? undefined : at(NUMBER, sql, i);
    const char = word ?? number ?? String.fromCodePoint(sql.codePointAt(i) ?? 0);
    push(word ? 'word' : number ? 'number' : 'punct', word ? char.toUpperCase() : char, char);
    i += char.length;
  }
  return executable ? { tokens, unterminated: 'a /*! comment' } : { tokens };
}
