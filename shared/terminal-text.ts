/**
 * Text an agent shaped (SQL, parameter values, tool arguments, the client name it gave, error
 * texts that quote them), made safe to show a person: in a terminal, where a control sequence
 * moves the cursor, erases or rewrites what is already on screen, and in an editor's approval
 * form, where a bidirectional override or a zero-width character reorders or hides text. What a
 * person approves must be what runs, so every such character is shown as an escape instead.
 *
 * The class is taken from Unicode's general categories, not a hand list:
 * - Cc, the controls: C0 (U+0000–U+001F, CR and ESC among them), DEL (U+007F) and C1
 *   (U+0080–U+009F, the 8-bit CSI U+009B among them; ECMA-48 gives both forms of each control);
 * - Cf, the format characters: the bidi marks, embeddings, overrides and isolates (U+061C,
 *   U+200E/F, U+202A–U+202E, U+2066–U+2069), zero-width characters (U+200B–U+200D), the
 *   byte-order mark (U+FEFF), the soft hyphen, tag characters (U+E0000–U+E007F) and the rest;
 * - Zl and Zp, the line and paragraph separators (U+2028, U+2029), which some readers break on;
 * - Cs, a surrogate that is not half of a pair (it prints as nothing a person can read).
 */

/** Every character shown as an escape (`\n` and `\t` too, unless kept). Linear: one class, no backtracking. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** The same, but keeping line feeds and tabs (neither moves back over what was printed). */
const HIDDEN_KEEP_LAYOUT = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0xa0) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every control, format and separator character shown as an escape (`\x1b`, `\r`,
 * `\x9b`, `\u202e`). With `lines`, line feeds and tabs stay: for text printed line by line, each
 * line indented on a line of its own, where they cannot move back over what is on screen.
 */
export function visible(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(options.lines ? HIDDEN_KEEP_LAYOUT : HIDDEN, escapeOf);
}

/** True when `visible` would change `text`: it holds characters a person would not see as they are. */
export function hasHidden(text: string, options: { lines?: boolean } = {}): boolean {
  return visible(text, options) !== text;
}

/**
 * JSON text with every character `visible` escapes (but the line feeds of its layout) written as
 * JSON escapes. JSON.stringify escapes C0 controls and lone surrogates, not C1 controls or format
 * characters; outside strings JSON.stringify writes none of these, so the value parsed is the same.
 */
export function visibleJson(json: string): string {
  return json.replace(HIDDEN_KEEP_LINES, (ch) => {
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

const HIDDEN_KEEP_LINES = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Said under a statement that holds characters shown as escapes. */
export const ESCAPED_NOTE =
  'Control and invisible characters in it are shown as escapes (such as \\x1b, \\r, \\u202e); they are part of the statement.';

/** Agent text on one line: escaped first, then each run of white space folded to one space. */
export function oneLine(text: string): string {
  return visible(text, { lines: true }).replace(/\s+/g, ' ').trim();
}

/** How much of one parameter value is shown; the rest is cut, and its whole length said. */
export const PARAM_PREVIEW_CHARS = 200;

/**
 * One bound parameter value as a person sees it: a string quoted (so `"1"` and `1`, `"NULL"` and
 * `null` differ), escaped as `visible` does, a long one cut with a marker and its whole length.
 */
export function paramText(value: string | number | boolean | null): string {
  if (typeof value !== 'string') return String(value);
  if (value.length <= PARAM_PREVIEW_CHARS) return visible(JSON.stringify(value));
  let end = PARAM_PREVIEW_CHARS;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${visible(JSON.stringify(value.slice(0, end)))}… (cut; ${value.length} characters in all)`;
}
