import { HanactlError } from '../../../shared/errors.js';
import { CATEGORIES, type Category } from '../../policy/objections.js';
import { DOLLAR_QUOTE, FIRST_NORMAL_OID, TEXT_LANGUAGE, TOKEN, UNREADABLE_TOKEN } from './postgres-reach.js';

/**
 * Utility statements in a person's SQL or PL/pgSQL text body. A read-only transaction stops
 * writes, DDL and TRUNCATE, yet PostgreSQL lets a number of utility commands run in one
 * (ClassifyUtilityCommandAsReadOnly, src/backend/tcop/utility.c), and both languages hand a
 * statement of their own to the server as it is written: a function the walk reaches can then
 * run for the agent what the statement check refuses when sent directly, with effects the call's
 * rollback does not undo.
 *
 * Of the commands utility.c allows, those a function body can run (each tried on the server in a
 * SQL and a PL/pgSQL body inside a read-only transaction block) and that leave something behind:
 * - COPY (TO and FROM): in a body only with a file or a PROGRAM (functions.c and PL/pgSQL refuse
 *   COPY to or from the client), so it writes or reads a file on the database host or runs a
 *   program there;
 * - LOAD: loads a library into the pooled backend, where it stays (auto_explain);
 * - ANALYZE (ANALYSE), CLUSTER, REINDEX, CHECKPOINT, VACUUM: change pg_class's figures and the
 *   statistics in place, rewrite tables and indexes, force a checkpoint (not undone by a rollback;
 *   VACUUM cannot run in a function, and is listed all the same);
 * - PREPARE, DEALLOCATE, DISCARD: prepared statements and plans belong to the session, not the
 *   transaction (a PREPARE outlives ROLLBACK), so they reach the pooled backend's next caller;
 * - LISTEN, UNLISTEN, NOTIFY, LOCK: the session's channels, a notification, and locks that block
 *   other sessions while the call runs.
 * Left to other rules: EXECUTE and DO (runtimeCodeFinding: the text they run is unknown), SET and
 * RESET (transactional, undone by the rollback; the role, the session's authorization and
 * context values are runtimeCodeFinding's), CALL (the procedure is followed by its name), EXPLAIN
 * and SHOW (read only), DECLARE, FETCH, MOVE and CLOSE (cursors of the call's own transaction;
 * PL/pgSQL's own statements of those names), SET CONSTRAINTS (no write to defer). ALTER SYSTEM and
 * DISCARD ALL refuse to run inside a transaction block; transaction statements are refused in
 * function bodies by the server. A BEGIN ATOMIC body cannot hold a utility statement (the server
 * refuses it when the function is created), and a body in another language is refused unread
 * (runtimeCodeFinding, `L`).
 *
 * On a read-only connection every one of these is refused; on a writable one, those the
 * statement check refuses on every connection when sent directly (host-access: COPY with a file
 * or program, LOAD; session-change: PREPARE, DEALLOCATE, DISCARD, LISTEN, UNLISTEN;
 * lock-statement: LOCK), so a person's function does not run for the agent what it could not
 * send itself.
 */

/** Each utility statement the finding looks for, by its first word, with the statement check's category for it (statement-kinds.ts) as a function body holds it. */
const UTILITY: Readonly<Record<string, Category>> = {
  analyse: 'admin-statement',
  analyze: 'admin-statement',
  checkpoint: 'admin-statement',
  cluster: 'admin-statement',
  copy: 'host-access',
  deallocate: 'session-change',
  discard: 'session-change',
  listen: 'session-change',
  load: 'host-access',
  lock: 'lock-statement',
  notify: 'admin-statement',
  prepare: 'session-change',
  reindex: 'admin-statement',
  unlisten: 'session-change',
  vacuum: 'admin-statement',
};

/** The first words refused in a body on a connection of this mode: all of UTILITY on a read-only one, else those refused on every connection. */
export function utilityWords(readOnly: boolean): string[] {
  return Object.keys(UTILITY).filter((w) => readOnly || CATEGORIES[UTILITY[w] as Category].always);
}

/** A SQL array of `words`. */
const textArray = (words: readonly string[]): string => `'{${words.join(',')}}'::pg_catalog.text[]`;

/**
 * The tokens that start a statement when they come before a word: the body's start, `;`, and in
 * PL/pgSQL BEGIN, THEN (IF, ELSIF, CASE, EXCEPTION WHEN), ELSE, LOOP, and a label's `>>`.
 */
const STARTS_STATEMENT = textArray([';', 'begin', 'then', 'else', 'loop']);

/**
 * Tokens after a word that make it a name, not a statement's keyword: a PL/pgSQL assignment
 * (`copy := 1`, `load = 2`), a field or an element (`copy.x`, `copy[1]`), and what follows a
 * value in a CASE (`THEN copy END`, `ELSE load,`); no utility statement continues so.
 */
const NOT_A_STATEMENT = `ARRAY[':', '=', '.', '[', ',', ')', '|', '+', '-', '/', '<', '>', 'end', 'else', 'when']::pg_catalog.text[]`;

/**
 * The first word of a utility statement among `words` that the SQL or PL/pgSQL text body
 * `p.prosrc` runs as a statement of its own (lower case), or NULL. The body is read as the walk
 * reads it for EXECUTE and SET ROLE (TOKEN: comments, strings, E'' strings and quoted names are
 * not keywords, so `"copy"` is a name). A body TOKEN cannot read for certain (a dollar quote, an
 * unreadable token) is judged by its words alone: any of the words, anywhere.
 */
export function utilityStatement(words: readonly string[]): string {
  const list = textArray(words);
  const pattern = `'\\m(${words.join('|')})\\M'`;
  return `(CASE WHEN p.prosrc OPERATOR(pg_catalog.~) ${DOLLAR_QUOTE}
                  OR EXISTS (SELECT FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') AS t(m) WHERE ${UNREADABLE_TOKEN})
             THEN (SELECT pg_catalog.lower(w.m[1]) FROM pg_catalog.regexp_matches(p.prosrc, ${pattern}, 'gi') AS w(m) LIMIT 1)
             ELSE (SELECT q.w FROM (SELECT k.w, k.n, pg_catalog.lag(k.w) OVER (ORDER BY k.n) AS prev, pg_catalog.lag(k.w, 2) OVER (ORDER BY k.n) AS prev2,
                                           pg_catalog.lead(k.w) OVER (ORDER BY k.n) AS next
                                      FROM (SELECT pg_catalog.lower(t.m[1]) AS w, t.n
                                              FROM pg_catalog.regexp_matches(p.prosrc, ${TOKEN}, 'g') WITH ORDINALITY AS t(m, n)
                                             WHERE t.m[1] OPERATOR(pg_catalog.!~) '^(\\s|--|/\\*)') AS k) AS q
                    WHERE q.w OPERATOR(pg_catalog.=) ANY (${list})
                      AND (q.prev IS NULL OR q.prev OPERATOR(pg_catalog.=) ANY (${STARTS_STATEMENT})
                           OR (q.prev OPERATOR(pg_catalog.=) '>' AND q.prev2 OPERATOR(pg_catalog.=) '>'))
                      AND (q.next IS NULL OR q.next OPERATOR(pg_catalog.<>) ALL (${NOT_A_STATEMENT}))
                    ORDER BY q.n LIMIT 1) END)`;
}

/**
 * A reached SQL or PL/pgSQL function, created since initdb, whose text body runs a utility
 * statement refused on a connection of this mode (utilityWords), as `M <word> <root> calls
 * <name>()`, or NULL. Only bodies that hold one of the words are tokenised (the CASE keeps that
 * test first).
 */
export function utilityFinding(readOnly: boolean): string {
  const words = utilityWords(readOnly);
  const word = utilityStatement(words);
  return `(SELECT pg_catalog.concat('M ', ${word}, ' ', r.root, ' calls ', p.proname, '()')
     FROM reach r JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) r.oid
    WHERE r.kind OPERATOR(pg_catalog.=) 'p' AND p.oid OPERATOR(pg_catalog.>=) ${FIRST_NORMAL_OID} AND ${TEXT_LANGUAGE}
      AND p.prosqlbody IS NULL AND p.prosrc OPERATOR(pg_catalog.~*) '\\m(${words.join('|')})\\M'
      AND CASE WHEN ${word} IS NOT NULL THEN true ELSE false END
    LIMIT 1)`;
}

/** The refusal for `what`, a utility finding after its letter: `<word> <root> calls <name>()`. */
export function utilityRefusal(what: string): HanactlError | undefined {
  const found = /^([a-z]+) (.*) calls ([^ ]+)$/s.exec(what);
  if (!found) return undefined;
  const [, word, root, target] = found as unknown as [string, string, string, string];
  const category = UTILITY[word];
  if (category === undefined) return undefined;
  const entry = CATEGORIES[category];
  const statement = word.toUpperCase();
  const through = root === target ? `${target} runs` : `${root} calls ${target}, whose body runs`;
  const does =
    word === 'copy'
      ? 'writes or reads a file on the database host or runs a program there (a function can only COPY to or from a file or a PROGRAM)'
      : word === 'load'
        ? 'loads a library into the server process, where it stays after the call'
        : entry.does;
  const where = entry.always
    ? 'which hanactl does not allow on any connection'
    : "which a read-only transaction does not stop, and its effect outlives the call's rollback; this connection is read-only";
  return new HanactlError('STATEMENT_REFUSED', `Refused: ${through} ${statement} as a statement of its own, which ${does}, ${where}.`, {
    rule: category,
    hint: 'Ask a person to run the function in a database client, or write the query the function would run directly.',
  });
}
