import { objection } from './objections.js';
import type { Objection } from './types.js';

/**
 * The second layer under the token rules on MariaDB/MySQL, on the raw text, resting on no reading
 * of token boundaries: the words that reach files on the host from a statement a read-only
 * transaction does not stop. `INTO OUTFILE` and `INTO DUMPFILE` write a file: OUTFILE and DUMPFILE
 * are refused anywhere, strings, comments and names included, inside longer words too. LOAD_FILE()
 * reads one: it is refused wherever anything follows it but, after whitespace, a name, a comma or
 * a closing parenthesis, so a column named load_file still reads and no call does.
 *
 * Only ASCII spellings, in any case: the server matches keywords in ASCII only (sql_lex.cc
 * find_keyword → get_hash_symbol through to_upper_lex, which maps no byte above 127 to an ASCII
 * letter), and built-in function names too (`lóad_file()`, `LOAD_FİLE()` and `ＬOAD_FILE()` are
 * unknown functions on MariaDB 10.11). A regular expression's `i` flag without `u` folds ASCII only.
 */
const FILE_KEYWORDS = /outfile|dumpfile/i;
const LOAD_FILE = /load_file[ \t\n\r\f\v]*/gi;
/** What may follow LOAD_FILE where it is not a call: the rest of a name, a comma, a closing parenthesis, the end. */
const NOT_A_CALL = /^(?:[A-Za-z0-9_$,)]|$)/;

/** The refusal for a text holding one of the words that reach files on the host, or undefined. */
export function hostFileWords(sql: string): Objection | undefined {
  const keyword = FILE_KEYWORDS.exec(sql);
  if (keyword) return refusal(keyword[0].toUpperCase(), 'anywhere in the text, in strings, comments and names too');
  LOAD_FILE.lastIndex = 0;
  for (let found = LOAD_FILE.exec(sql); found; found = LOAD_FILE.exec(sql)) {
    const end = found.index + found[0].length;
    if (!NOT_A_CALL.test(sql.slice(end, end + 1))) {
      return refusal(
        'LOAD_FILE',
        'anywhere in the text, in strings, comments and names too, unless a name, a comma or a closing parenthesis follows it',
      );
    }
  }
  return undefined;
}

function refusal(word: string, where: string): Objection {
  return objection(
    'host-access',
    `Refused: the text holds the word ${word}, which reaches files on the database host; on MariaDB and MySQL it is refused ${where}, on every connection.`,
    'To compare or store text holding it, pass the value as a query parameter (run_query params, ? in the SQL) instead of writing it in the statement; files on the host are out of reach by design.',
  );
}
