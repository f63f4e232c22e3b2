import { HanactlError } from '../../shared/errors.js';
import { DIALECTS, signsContext } from '../engines/index.js';
import { hostAccessAnywhere, sessionChangeAnywhere } from './anywhere-rules.js';
import { contextCodeRule } from './context-code.js';
import { deniedFunction } from './denied-functions.js';
import type { DialectPolicy, LexicalSyntax } from './dialects.js';
import { embeddedSql } from './embedded-sql.js';
import { functionReferenceRule } from './function-references.js';
import { type Lexed, lex, MAX_COMMENT_DEPTH, sameReading } from './lexer.js';
import { CATEGORIES, categoryObjection, objection } from './objections.js';
import { operatorChain } from './operator-chain.js';
import { plannerFiguresRule } from './planner-figures.js';
import { readObjection } from './read-rules.js';
import { sharedSchemaTokenRule } from './shared-schema.js';
import { splitStatements } from './skeletonize.js';
import { leadingKind } from './statement-kinds.js';
import type { Objection, PolicyOptions, StatementReferences, Verdict } from './types.js';

/** Bounds that keep validation linear in the input and its stack shallow, whatever the input. */
export const LIMITS = {
  /** Levels of SQL text run by a function (query_to_xml) inside SQL text. */
  embeddedDepth: 4,
  /** Nested block comments (PostgreSQL). */
  commentDepth: MAX_COMMENT_DEPTH,
  /** Nested parentheses; PostgreSQL itself stops far below what a 1 MB text can nest. */
  parenDepth: 1000,
  /** Tokens in one text: far above any query a person writes, low enough to judge in milliseconds. */
  tokens: 100_000,
  /**
   * Characters lexed for one call, over all readings, both checks and every embedded text: a
   * megabyte read in each of the ways its backslashes and executable comments allow.
   */
  work: 4 * 1024 * 1024,
  /**
   * Characters of SQL text run by functions (query_to_xml) checked for one call, counting each time
   * a text is checked (both checks, every level): the bound on how much nesting multiplies the work.
   */
  embeddedChars: 64 * 1024,
  /**
   * PostgreSQL's scanner work on runs of operator characters (Lexed.operatorWork): a run of about
   * 700 characters, a few milliseconds of the server's scanner and of its parser's here.
   */
  operatorWork: 256 * 1024,
  /**
   * Operators nested in one expression (operator-chain.ts), on PostgreSQL, whose parser runs out
   * of stack on a chain of about 4,000 `COLLATE` or 7,000 `+` on the daemon's main thread: a quarter
   * of that, and far more than any expression a person writes.
   */
  operatorChain: 1000,
  /**
   * Tokens judged by the token rules for one call, over every reading that differs from the first
   * and every SQL text run by a function: lexing and judging cost up to 0.4 µs a token on a busy
   * machine (MySQL's rules), so 64,000 are about 25 ms, and hold an INSERT of 5,000 rows of four
   * values (55,000). Where the engine's own parser checks the
   * text too (PostgreSQL: about 0.3 µs per token to parse, and as much again to read its tree),
   * fewer: 40,000 tokens hold an INSERT of 3,000 rows of four values (33,000).
   */
  tokensJudged: 64_000,
  tokensJudgedWithParser: 40_000,
  /**
   * What each SQL text run by a function costs beyond its length, in characters of embeddedChars:
   * a check's fixed cost (two checks, one of them a parse), so that many short texts are bounded too.
   */
  embeddedTextCost: 512,
} as const;

/** What one call may still spend, shared by both checks and every level of embedded SQL text. */
interface Budget {
  work: number;
  embedded: number;
  tokens: number;
  readonly tokenLimit: number;
}

const newBudget = (dialect: DialectPolicy): Budget => {
  const tokens = dialect.parserCheck ? LIMITS.tokensJudgedWithParser : LIMITS.tokensJudged;
  return { work: LIMITS.work, embedded: LIMITS.embeddedChars, tokens, tokenLimit: tokens };
};

const tooManyTokens = (budget: Budget, cut: boolean): Objection =>
  tooComplex(
    `${cut ? `more than ${budget.tokenLimit.toLocaleString('en')}` : (budget.tokenLimit - budget.tokens).toLocaleString('en')} tokens to judge, counting every way the server could read the text and every SQL text it hands to functions, where the limit is ${budget.tokenLimit.toLocaleString('en')}`,
  );

const tooComplex = (what: string): Objection =>
  objection(
    'too-complex',
    `Refused: the statement is too complex to check (${what}).`,
    'Split it into simpler statements and send each on its own.',
  );

const embeddedTooLong = (): Objection =>
  objection(
    'too-complex',
    `Refused: the statement is too complex to check (the SQL text it hands to functions such as query_to_xml, counted at every level of nesting, ${LIMITS.embeddedTextCost} characters more for each text, is over ${LIMITS.embeddedChars / 1024} KB).`,
    'Run the inner query on its own, or split the statement, and send it again.',
  );

/** One reading of the input through the rule chain. */
function judge(lexed: Lexed, dialect: DialectPolicy, options: PolicyOptions, embedded: (sql: string) => Verdict): Verdict {
  if (lexed.ambiguous) {
    return objection(
      'ambiguous-text',
      `Refused: the text holds ${lexed.ambiguous}, which the database may read differently than this check does.`,
      'Remove it and send the statement again.',
    );
  }
  if (lexed.commentTooDeep) return tooComplex(`comments nested more than ${LIMITS.commentDepth} deep`);
  if (lexed.unterminated) {
    return objection(
      'unterminated',
      `Refused: the text ends inside ${lexed.unterminated}.`,
      'Close it, or remove it, and send the statement again.',
    );
  }
  if (lexed.tooMany) return tooComplex(`more than ${LIMITS.tokens} tokens`);
  if (lexed.depth > LIMITS.parenDepth) return tooComplex(`more than ${LIMITS.parenDepth} nested parentheses`);
  if (dialect.parserCheck && lexed.operatorWork > LIMITS.operatorWork) {
    return objection(
      'too-complex',
      "Refused: the statement is too complex to check (long runs of operator characters such as +-*/<>=~!@#%^&|, which PostgreSQL's scanner reads in time that grows with the square of each run).",
      'Put spaces between operators and comments, or split the statement, and send it again.',
    );
  }
  const [tokens, ...more] = splitStatements(lexed.tokens, dialect.sqlscriptBlocks);
  if (!tokens) {
    return objection('empty', 'Refused: there is no statement to run; the text is empty or only comments.', 'Send one SQL statement.');
  }
  if (more.length > 0) {
    return objection(
      'multiple-statements',
      `Refused: the text holds ${more.length + 1} statements, and a call runs exactly one.`,
      'Send each statement in its own call.',
    );
  }
  if (lexed.nul) {
    return objection(
      'nul-character',
      'Refused: the text holds a NUL character outside a string, where engines end the statement or the comment early.',
      'Remove it and send the statement again.',
    );
  }
  if (dialect.parserCheck) {
    const chain = operatorChain(tokens);
    if (chain > LIMITS.operatorChain) {
      return objection(
        'too-complex',
        `Refused: the statement is too complex to check (operators nested ${chain} deep in one expression, where PostgreSQL's parser is given at most ${LIMITS.operatorChain}).`,
        'Write long chains as lists (IN (...), ARRAY[...], a VALUES list), or split the statement, and send it again.',
      );
    }
  }
  const lead = leadingKind(tokens);
  const refusal =
    (lead && CATEGORIES[lead.category].always ? categoryObjection(lead.category, lead.label) : undefined) ??
    sessionChangeAnywhere(tokens, dialect) ??
    hostAccessAnywhere(tokens) ??
    deniedFunction(tokens, options.allowWrite) ??
    functionReferenceRule(tokens, dialect, options.allowWrite) ??
    dialect.catalogRules?.(tokens, options.allowWrite, options.database) ??
    embeddedSql(tokens, embedded) ??
    // On a read-only connection code is refused by the read-only rules, which name it better.
    contextCodeRule(tokens, dialect, options.allowWrite && options.unsignedContext, signsContext(options.dialect)) ??
    (options.rowSeparation ? (plannerFiguresRule(tokens) ?? dialect.separatedRowsRules?.(tokens, options.database)) : undefined) ??
    ((options.rowSeparation || options.sharedLogin) && options.allowWrite
      ? (dialect.roleStateRules?.(tokens) ?? sharedSchemaTokenRule(tokens, dialect, options.sharedLogin === true))
      : undefined);
  if (refusal) return refusal;
  // On a writable connection this decides the kind: anything the read-only rules refuse is a write.
  // On a read-only one the function and catalog rules above were these same rules, and passed.
  const readRefusal =
    (options.allowWrite ? (deniedFunction(tokens, false) ?? dialect.catalogRules?.(tokens, false, options.database)) : undefined) ??
    readObjection(tokens, dialect);
  if (!readRefusal) return { ok: true, kind: 'read' };
  return options.allowWrite ? { ok: true, kind: 'write' } : readRefusal;
}

/** Folds one more reading into the verdict so far: a refusal wins, a write outweighs a read. */
const fold = (so: Verdict, other: Verdict): Verdict => (!so.ok ? so : !other.ok ? other : other.kind === 'write' ? other : so);

/**
 * The text under one string reading; a versioned executable comment adds the reading where its
 * body is a comment. SQL text run by a function is checked under the same reading (the server's
 * settings are the same for it), once, so the work is the text's length times its nesting.
 */
function checkReading(
  sql: string,
  syntax: LexicalSyntax,
  context: { readonly dialect: DialectPolicy; readonly options: PolicyOptions; readonly budget: Budget; readonly alternative: boolean },
  depth = 0,
  primary?: { lexed?: Lexed },
): Verdict | undefined {
  const { dialect, options, budget } = context;
  const embedded = (inner: string): Verdict => {
    if (depth >= LIMITS.embeddedDepth) return tooComplex(`SQL text run by a function nested more than ${LIMITS.embeddedDepth} levels deep`);
    budget.embedded -= inner.length + LIMITS.embeddedTextCost;
    if (budget.embedded < 0) return embeddedTooLong();
    const readOnly = { ...context, options: { ...options, allowWrite: false } };
    return checkReading(inner, syntax, readOnly, depth + 1) ?? { ok: true, kind: 'read' };
  };
  const variants = [syntax];
  let verdict: Verdict | undefined;
  for (let v = 0; v < variants.length; v++) {
    budget.work -= sql.length;
    if (budget.work < 0) return tooComplex('too much text to read in all the ways the database could read it');
    // Lexing stops one token past what is left to judge: a megabyte of tokens is not read whole to be refused.
    // Another reading is lexed as far as the first went, to be compared with it.
    const first = context.alternative && v === 0 ? (primary?.lexed?.tokens.length ?? 0) : 0;
    const cap = Math.min(LIMITS.tokens, Math.max(0, budget.tokens, first) + 1);
    const lexed = lex(sql, variants[v] as LexicalSyntax, cap);
    // A reading under another server setting that does not even lex cannot be how the server reads it.
    if (context.alternative && v === 0 && lexed.unterminated) return undefined;
    if (lexed.versioned && v === 0) variants.push({ ...syntax, executableComments: 'comment' });
    if (v === 0 && primary && !context.alternative) primary.lexed = lexed;
    else if (v === 0 && primary?.lexed && sameReading(lexed, primary.lexed)) {
      // The first reading's tokens, which passed every rule: only SQL text handed to a function,
      // itself read under this reading's setting, can be judged differently.
      const refused = embeddedSql(lexed.tokens, embedded);
      if (refused) return refused;
      continue;
    }
    budget.tokens -= lexed.tokens.length;
    if (budget.tokens < 0 || (lexed.tooMany && cap < LIMITS.tokens)) return tooManyTokens(budget, lexed.tooMany === true);
    const other = judge(lexed, dialect, options, embedded);
    verdict = verdict ? fold(verdict, other) : other;
    if (!verdict.ok) return verdict;
  }
  return verdict;
}

/**
 * Judges one SQL text before any connection is borrowed. Pure: no I/O, never throws, linear in
 * the input and bounded (LIMITS): past a bound it refuses with rule `too-complex`. Two
 * independent checks: the token rules (every engine), then the engine's own parser where the
 * policy has one (PostgreSQL); where they disagree, the text is refused.
 *
 * Read-only connections run only reads (SELECT, WITH, VALUES, TABLE, EXPLAIN of a read, SHOW,
 * DESCRIBE, reporting PRAGMAs, per dialect). Writable connections run anything else too, except
 * what no connection runs: more than one statement, transaction control, session and context
 * changes, host file or program access, explicit locks, server administration and the denied
 * functions. A text containing a backslash must also pass under the dialect's other string
 * readings (MySQL NO_BACKSLASH_ESCAPES and ANSI_QUOTES, PostgreSQL standard_conforming_strings off).
 * `withReferences`: an accepted PostgreSQL statement's verdict also carries the relations and
 * functions it names (StatementReferences), for the server to resolve in the call's transaction.
 */
export function checkStatement(sql: string, options: PolicyOptions, withReferences = false): Verdict {
  const verdict = checkAt(sql, options, 0, newBudget(DIALECTS[options.dialect]));
  return withReferences || !verdict.ok || !verdict.references ? verdict : { ok: true, kind: verdict.kind };
}

/** Both checks at one level of SQL text run by a function. */
function checkAt(sql: string, options: PolicyOptions, depth: number, budget: Budget): Verdict {
  const dialect = DIALECTS[options.dialect];
  const verdict = checkTokens(sql, options, budget);
  if (!verdict.ok || !dialect.parserCheck) return verdict;
  const embedded = (inner: string): Verdict => {
    if (depth >= LIMITS.embeddedDepth) return tooComplex(`SQL text run by a function nested more than ${LIMITS.embeddedDepth} levels deep`);
    budget.embedded -= inner.length + LIMITS.embeddedTextCost;
    if (budget.embedded < 0) return embeddedTooLong();
    return checkAt(inner, { ...options, allowWrite: false }, depth + 1, budget);
  };
  let references: StatementReferences | undefined;
  const refused = dialect.parserCheck(sql, options, verdict.kind, embedded, (found) => {
    references = found;
  });
  if (refused) return refused;
  // What the statement names, for the server to resolve; at a level of SQL text run by a function,
  // for the level above to add to its own (the server resolves them all before the statement runs).
  // Where rows are separated the server also refuses what reaches the executor's statistics; on a
  // read-only connection, what reaches a built-in only a writable connection runs.
  if (!references || !namesAnything(references)) return verdict;
  return {
    ...verdict,
    references: {
      ...references,
      ...(options.rowSeparation ? { separated: true } : {}),
      ...(options.allowWrite ? {} : { readOnly: true }),
    },
  };
}

function namesAnything(references: StatementReferences): boolean {
  return (
    references.relations.length > 0 ||
    references.functions.length > 0 ||
    (references.operators?.length ?? 0) > 0 ||
    (references.types?.length ?? 0) > 0 ||
    (references.attributes?.length ?? 0) > 0 ||
    references.settings !== undefined
  );
}

/** The first check: the token rules, under every reading the engine's settings allow. */
function checkTokens(sql: string, options: PolicyOptions, budget: Budget): Verdict {
  const dialect = DIALECTS[options.dialect];
  const context = { dialect, options, budget, alternative: false };
  const primary: { lexed?: Lexed } = {};
  let verdict = checkReading(sql, dialect.syntax, context, 0, primary) as Verdict;
  if (sql.includes('\\')) {
    for (const syntax of dialect.alternatives) {
      if (!verdict.ok) return verdict;
      const other = checkReading(sql, syntax, { ...context, alternative: true }, 0, primary);
      if (other) verdict = fold(verdict, other);
    }
  }
  // The raw-text layer, whatever the readings found: what the token rules refused keeps their name.
  return (verdict.ok ? dialect.rawTextRule?.(sql) : undefined) ?? verdict;
}

/**
 * Returns the statement's kind, or throws HanactlError `STATEMENT_REFUSED` whose message is the
 * refusal sentence and whose details carry `{rule, hint}`. Fits the daemon's StatementPolicy.check.
 */
export function assertStatementAllowed(sql: string, options: PolicyOptions): 'read' | 'write' {
  return assertStatementChecked(sql, options).kind;
}

/** As assertStatementAllowed, with what the statement names (see checkStatement's `withReferences`). */
export function assertStatementChecked(sql: string, options: PolicyOptions): Checked {
  const verdict = checkStatement(sql, options, true);
  if (!verdict.ok) throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
  return verdict.references ? { kind: verdict.kind, references: verdict.references } : { kind: verdict.kind };
}

/** An accepted statement: its kind, and on PostgreSQL what it names. */
export interface Checked {
  readonly kind: 'read' | 'write';
  readonly references?: StatementReferences;
}
