import { describe, expect, it } from 'vitest';
import { oneLine, paramText, visible, visibleJson } from '../../../shared/terminal-text.js';

/** Any character a terminal or a form would act on or hide, rather than show. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

describe('visible: agent text as a person sees it', () => {
  it('shows every C0 control, DEL and a lone CR as an escape', () => {
    for (let code = 0; code < 0x20; code++) {
      const ch = String.fromCharCode(code);
      if (ch === '\n' || ch === '\t') continue;
      const shown = visible(`a${ch}b`);
      expect(shown, `U+${code.toString(16)}`).not.toMatch(HIDDEN);
      expect(shown.length).toBeGreaterThan(3);
    }
    expect(visible('a\x7fb')).toBe('a\\x7fb');
    expect(visible('DELETE FROM items -- \u001b[2K\r    UPDATE items')).toBe('DELETE FROM items -- \\x1b[2K\\r    UPDATE items');
    expect(visible('x\ry')).toBe('x\\ry');
  });

  it('shows C1 controls (U+0080–U+009F), the 8-bit CSI among them, as escapes', () => {
    for (let code = 0x80; code <= 0x9f; code++) {
      const shown = visible(`a${String.fromCharCode(code)}b`);
      expect(shown).toBe(`a\\x${code.toString(16)}b`);
    }
    expect(visible('\u009b2K')).toBe('\\x9b2K');
  });

  it('shows format characters that reorder or hide text (Unicode category Cf) and line separators', () => {
    const cases: Record<string, string> = {
      '\u202e': '\\u202e', // right-to-left override
      '\u2066': '\\u2066', // left-to-right isolate
      '\u2069': '\\u2069',
      '\u200b': '\\u200b', // zero width space
      '\u200f': '\\u200f',
      '\u061c': '\\u061c',
      '\ufeff': '\\ufeff',
      '\u00ad': '\\u00ad', // soft hyphen
      '\u2028': '\\u2028',
      '\u2029': '\\u2029',
      '\u{e0041}': '\\u{e0041}', // a tag character
    };
    for (const [ch, shown] of Object.entries(cases)) expect(visible(`a${ch}b`)).toBe(`a${shown}b`);
  });

  it('shows a lone surrogate as an escape, and keeps ordinary text, pairs and marks as they are', () => {
    expect(visible('a\ud800b')).toBe('a\\ud800b');
    const plain = "SELECT 'Grüße', 'München', '東京', '😀', 'é' -- ok";
    expect(visible(plain)).toBe(plain);
  });

  it('keeps line breaks and tabs only where asked for (each line then printed on its own)', () => {
    expect(visible('a\nb\tc')).toBe('a\\nb\\tc');
    expect(visible('a\nb\tc', { lines: true })).toBe('a\nb\tc');
    expect(visible('a\r\nb', { lines: true })).toBe('a\\r\nb');
  });

  it('takes time linear in its input', () => {
    const long = '\u001b'.repeat(1_000_000);
    const started = performance.now();
    expect(visible(long)).toHaveLength(4_000_000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('oneLine', () => {
  it('escapes first, then folds white space to single spaces', () => {
    expect(oneLine('  UPDATE t\n\tSET a = 1  ')).toBe('UPDATE t SET a = 1');
    expect(oneLine('DELETE FROM t -- \u001b[2K\r\n  UPDATE t')).toBe('DELETE FROM t -- \\x1b[2K\\r UPDATE t');
    expect(oneLine('a\ufeffb\u2028c')).toBe('a\\ufeffb\\u2028c');
  });
});

describe('paramText', () => {
  it('gives a value as a literal a person can tell apart: strings quoted, numbers, booleans and null bare', () => {
    expect(paramText('%')).toBe('"%"');
    expect(paramText('1')).toBe('"1"');
    expect(paramText(1)).toBe('1');
    expect(paramText(true)).toBe('true');
    expect(paramText(null)).toBe('null');
    expect(paramText('NULL')).toBe('"NULL"');
  });

  it('shows the controls in a value as escapes', () => {
    expect(paramText('a\u001b[2K\rb\u202e')).not.toMatch(HIDDEN);
    expect(paramText('a\u009bb')).toBe('"a\\x9bb"');
  });

  it('cuts a long value with a visible marker and its whole length', () => {
    const shown = paramText('x'.repeat(5000));
    expect(shown.length).toBeLessThan(300);
    expect(shown).toMatch(/^"x+"… \(cut; 5000 characters in all\)$/);
    // Never inside a surrogate pair.
    expect(paramText(`${'x'.repeat(199)}😀${'y'.repeat(300)}`)).not.toMatch(HIDDEN);
  });
});

describe('visibleJson', () => {
  it('writes C1 controls, format characters and separators as JSON escapes; the value parsed is the same', () => {
    const value = { sql: 'a\u009bb\u202ec\u2028d\u{e0041}😀\u001b', n: [1, 'x\ny'] };
    const text = visibleJson(JSON.stringify(value, null, 2));
    expect(text).not.toMatch(/(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
    expect(text).toContain('😀');
    expect(text).toContain('\\u009b');
    expect(JSON.parse(text)).toEqual(value);
  });
});
