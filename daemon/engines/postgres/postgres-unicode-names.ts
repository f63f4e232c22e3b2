/**
 * Names and strings a SQL or PL/pgSQL text body writes with Unicode escapes (`U&"..."`,
 * `U&'...'`), read as PostgreSQL reads them, for the walk (postgres-reach.ts), whose rules key on
 * the names a body holds.
 *
 * The scanner (scan.l) makes one token of `U&"..."` (UIDENT) or `U&'...'` (USCONST): `U&` then the
 * quote with nothing between, the quote doubled inside for itself, a string continued by another
 * after a line break. The grammar's lexer (parser.c, base_yylex) then looks at the next token,
 * past white space and comments: when it is the keyword UESCAPE, the one after must be a string
 * constant of one byte, the escape (check_uescapechar: not a hex digit, `+`, `'`, `"` nor white
 * space); else the escape is `\`. str_udeescape decodes: the escape twice is the escape, the escape
 * and 4 hex digits or `+` and 6 a code point (not 0, not past U+10FFFF; a UTF-16 surrogate only as
 * the first of a pair whose second follows at once), anything else after the escape an error.
 *
 * What is read here: the escape as `UESCAPE 'c'` (any comments and white space between the
 * pieces) or the default. What is not is unreadable (unreadableUnicode), never guessed: an escape
 * given otherwise (`E'!'`, a dollar-quoted or continued string), a character the scanner refuses
 * or one this reading does not take (a control character), an escape that decodes to no
 * character, and a `U&` string continued by another. PL/pgSQL hands its statements to the same
 * scanner, so a body in either language reads alike.
 */

const G = 'pg_catalog';

/** A SQL string literal of `text` (standard_conforming_strings, as the walk is sent). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** A token that is white space or a comment: the grammar's lexer looks past them for UESCAPE. */
const SPACE_OR_COMMENT = literal(String.raw`^(\s|--|/\*)`);

/**
 * The escape character `UESCAPE 'c'` gives (`word`, `text`, `after` the three tokens after the
 * name or string, past white space and comments), `\` without UESCAPE, or NULL when the escape is
 * one this reading does not take: another form of string (E'', dollar quotes, a continued one),
 * more than one byte, a hex digit, `+`, a quote, white space or a control character.
 */
const escapeOf = (word: string, text: string, after: string): string => `CASE
      WHEN ${word} IS NULL OR ${G}.lower(${word}) OPERATOR(${G}.<>) 'uescape' THEN ${G}.chr(92)
      WHEN ${text} OPERATOR(${G}.~) '^''[!-~]''$' AND ${text} OPERATOR(${G}.!~) '^''[0-9A-Fa-f+"'']''$'
           AND (${after} IS NULL OR ${after} OPERATOR(${G}.!~~) '''%') THEN ${G}.substr(${text}, 2, 1)
    END`;

/** The regular expression of `esc` (one ASCII character) as one character, whatever it means to a regular expression. */
const asPattern = (esc: string): string => `${G}.concat('\\u00', ${G}.lpad(${G}.to_hex(${G}.ascii(${esc})), 2, '0'))`;

/**
 * `text` (a name's or a string's characters, its quotes undoubled) decoded with `esc` as
 * str_udeescape does, or NULL where the server refuses it: a lone escape, a code point 0 or past
 * U+10FFFF, a surrogate not in a pair. Each escape sequence, literal run or lone escape is one match.
 */
function decoded(text: string, esc: string): string {
  const x = asPattern(esc);
  const pattern = `${G}.concat(${x}, '(', ${x}, '|\\+[0-9A-Fa-f]{6}|[0-9A-Fa-f]{4})|([^', ${x}, ']+)|(', ${x}, ')')`;
  const high = (v: string) => `${v} OPERATOR(${G}.>=) 55296 AND ${v} OPERATOR(${G}.<=) 56319`;
  const low = (v: string) => `${v} OPERATOR(${G}.>=) 56320 AND ${v} OPERATOR(${G}.<=) 57343`;
  return `(SELECT CASE WHEN ${G}.bool_or(d.bad) THEN NULL ELSE COALESCE(${G}.string_agg(d.piece, '' ORDER BY d.n), '') END
     FROM (SELECT e.n,
                  e.lone OR (e.cp IS NOT NULL AND (e.cp OPERATOR(${G}.<) 1 OR e.cp OPERATOR(${G}.>) 1114111
                        OR (${high('e.cp')} AND NOT COALESCE(${low('e.next')}, false))
                        OR (${low('e.cp')} AND NOT COALESCE(${high('e.prev')}, false)))) AS bad,
                  CASE WHEN e.cp IS NULL THEN e.lit
                       WHEN ${high('e.cp')} AND ${low('e.next')}
                         THEN ${G}.chr(65536 OPERATOR(${G}.+) ((e.cp OPERATOR(${G}.-) 55296) OPERATOR(${G}.*) 1024) OPERATOR(${G}.+) (e.next OPERATOR(${G}.-) 56320))
                       WHEN e.cp OPERATOR(${G}.>=) 1 AND e.cp OPERATOR(${G}.<=) 1114111 AND NOT (e.cp OPERATOR(${G}.>=) 55296 AND e.cp OPERATOR(${G}.<=) 57343)
                         THEN ${G}.chr(e.cp)
                       ELSE '' END AS piece
             FROM (SELECT c.n, c.cp, c.lit, c.lone, ${G}.lag(c.cp) OVER (ORDER BY c.n) AS prev, ${G}.lead(c.cp) OVER (ORDER BY c.n) AS next
                     FROM (SELECT m.n,
                                  CASE WHEN m.m[1] IS NOT NULL AND m.m[1] OPERATOR(${G}.<>) ${esc}
                                       THEN ${G}.int4(${G}.bit_in(${G}.textout(${G}.concat('x', ${G}.lpad(${G}.ltrim(m.m[1], '+'), 8, '0'))), 0, 32)) END AS cp,
                                  CASE WHEN m.m[1] OPERATOR(${G}.=) ${esc} THEN ${esc} ELSE m.m[2] END AS lit,
                                  m.m[3] IS NOT NULL AS lone
                             FROM ${G}.regexp_matches(${text}, ${pattern}, 'g') WITH ORDINALITY AS m(m, n)) AS c) AS e) AS d)`;
}

/**
 * The tokens of `body` (TOKEN `token`, as `t(m, n)`), each as `q` with the two before it (`amp`,
 * `prefix`: `U&` when they are `&` and `U`, with nothing between) and, past white space and
 * comments, the three after it (`next1`..`next3`).
 */
function unicodeTokens(body: string, token: string): string {
  return `(SELECT s.q, s.amp, s.prefix, ${G}.lead(s.q) OVER w AS next1, ${G}.lead(s.q, 2) OVER w AS next2, ${G}.lead(s.q, 3) OVER w AS next3
          FROM (SELECT t.m[1] AS q, t.n, ${G}.lag(t.m[1]) OVER (ORDER BY t.n) AS amp, ${G}.lag(t.m[1], 2) OVER (ORDER BY t.n) AS prefix
                  FROM ${G}.regexp_matches(${body}, ${token}, 'g') WITH ORDINALITY AS t(m, n)
                 WHERE ${body} OPERATOR(${G}.~) '[uU]&[''"]') AS s
         WHERE s.q OPERATOR(${G}.!~) ${SPACE_OR_COMMENT}
        WINDOW w AS (ORDER BY s.n))`;
}

/** True for a token `q` written `U&"..."` or `U&'...'` (`amp`, `prefix` the two tokens before it). */
const isUnicode = (k: string): string =>
  `(${k}.amp OPERATOR(${G}.=) '&' AND ${G}.lower(${k}.prefix) OPERATOR(${G}.=) 'u' AND ${k}.q OPERATOR(${G}.~) '^["'']')`;

/**
 * The Unicode-escaped names and strings of the text body `body` (TOKEN `token`), as rows `(text,
 * string)`: `text` what the server reads (NULL where this reading cannot be sure of it), `string`
 * true for a `U&''` string (a relation's name handed as text, SQL text handed to a function).
 * Empty unless the body holds `U&"` or `U&'`.
 */
export function unicodeEscapes(body: string, token: string): string {
  const esc = escapeOf('k.next1', 'k.next2', 'k.next3');
  const inner = `${G}.substr(k.q, 2, GREATEST(${G}.length(k.q) OPERATOR(${G}.-) 2, 0))`;
  // A quote TOKEN found no end for: the server reads the text otherwise (or refuses it).
  const unended = `k.q OPERATOR(${G}.!~) '^(".*"|''.*'')$'`;
  const text = `CASE WHEN k.q OPERATOR(${G}.~~) '"%' THEN ${G}.replace(${inner}, '""', '"') ELSE ${G}.replace(${inner}, '''''', '''') END`;
  // A U&'' string is continued by a string after a line break (scan.l, quotecontinue): not read here.
  const continued = `(k.q OPERATOR(${G}.~~) '''%' AND k.next1 OPERATOR(${G}.~~) '''%')`;
  return `SELECT CASE WHEN v.escape IS NULL OR ${continued} OR ${unended} THEN NULL ELSE ${decoded('v.text', 'v.escape')} END AS text,
         k.q OPERATOR(${G}.~~) '''%' AS string
    FROM ${unicodeTokens(body, token)} AS k
    CROSS JOIN LATERAL (SELECT ${esc} AS escape, ${text} AS text) AS v
   WHERE ${isUnicode('k')}`;
}

/**
 * True when the text body `body` writes a Unicode-escaped name or string this reading cannot be
 * sure of (unicodeEscapes gives NULL), or holds `U&"` or `U&'` where TOKEN may not read it as the
 * server does: a dollar quote (`dollarQuote`), or a token `unreadableToken` flags (over `t.m[1]`: a
 * nested comment, a plain string with a backslash; a `U&''` string's backslashes are its escapes,
 * read as such, since the server refuses a `U&''` string where a backslash would end it).
 */
export function unreadableUnicode(body: string, token: string, dollarQuote: string, unreadableToken: string): string {
  return `(${body} OPERATOR(${G}.~) '[uU]&[''"]'
      AND (${body} OPERATOR(${G}.~) ${dollarQuote}
           OR EXISTS (SELECT FROM (SELECT t.m, ${G}.lag(t.m[1]) OVER (ORDER BY t.n) AS amp, ${G}.lag(t.m[1], 2) OVER (ORDER BY t.n) AS prefix
                                     FROM ${G}.regexp_matches(${body}, ${token}, 'g') WITH ORDINALITY AS t(m, n)) AS t
                       WHERE (${unreadableToken})
                         AND NOT (t.amp OPERATOR(${G}.=) '&' AND ${G}.lower(t.prefix) OPERATOR(${G}.=) 'u' AND t.m[1] OPERATOR(${G}.~~) '''%'))
           OR EXISTS (SELECT FROM (${unicodeEscapes(body, token)}) AS u WHERE u.text IS NULL)))`;
}
