import { describe, expect, it } from 'vitest';
import { colourAllowed, createStyle, progressLine } from '../../../cli/style.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };

describe('colour', () => {
  it.each([
    ['a terminal', tty, {}, true],
    ['a pipe', pipe, {}, false],
    ['a terminal with NO_COLOR=1', tty, { NO_COLOR: '1' }, false],
    ['a terminal with an empty NO_COLOR (the convention: not set)', tty, { NO_COLOR: '' }, true],
    ['a dumb terminal', tty, { TERM: 'dumb' }, false],
  ])('on %s: %s', (_what, stream, env, expected) => {
    expect(colourAllowed(stream, env)).toBe(expected);
    const style = createStyle(stream, env);
    expect(style.enabled).toBe(expected);
    expect(style.fail('x').includes('\u001b[')).toBe(expected);
  });

  it('leaves text as it is without colour', () => {
    const style = createStyle(pipe, {});
    expect([style.ok('ok'), style.warn('warn'), style.fail('fail'), style.dim('d'), style.bold('b')]).toEqual([
      'ok',
      'warn',
      'fail',
      'd',
      'b',
    ]);
  });
});

describe('progressLine', () => {
  const recorder = (isTTY: boolean) => {
    const written: string[] = [];
    return { stream: { isTTY, write: (t: string) => written.push(t) }, written };
  };

  it('writes nothing when the stream is not a terminal', () => {
    const { stream, written } = recorder(false);
    const p = progressLine(stream, 'Testing…');
    p.update('Testing… 1/2');
    p.done();
    expect(written).toEqual([]);
  });

  it('shows, updates and erases its line on a terminal', () => {
    const { stream, written } = recorder(true);
    const p = progressLine(stream, 'Testing…');
    p.update('Testing… 1/2');
    p.done();
    p.done();
    expect(written).toEqual(['\r\u001b[2KTesting…', '\r\u001b[2KTesting… 1/2', '\r\u001b[2K']);
  });
});
