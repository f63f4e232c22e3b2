import { describe, expect, it } from 'vitest';
import { contextUnavailable } from '../../../../daemon/engines/context-unavailable.js';
import { DRIVER_MESSAGE_CHARS, normaliseConnectError, normaliseDriverError } from '../../../../daemon/engines/scrub.js';

const MB = 1024 * 1024;

describe("a statement's error text (the agent shapes it)", () => {
  it('is passed on as the server wrote it, whatever it quotes: no value decides what is shown', () => {
    for (const text of [
      'invalid input syntax for type integer: "a-agentpw6-b-agentpw7-c"',
      'cannot execute nextval() in a read-only transaction',
    ]) {
      const err = normaliseDriverError(new Error(text), 'QUERY_FAILED', { sqlState: '22P02' });
      expect(err.message).toBe(text);
      expect(err.details).toEqual({ sqlState: '22P02' });
    }
  });

  it('still masks credential shapes and URL passwords, whole before it is cut', () => {
    const raw = `invalid input syntax for type integer: "${'x'.repeat(DRIVER_MESSAGE_CHARS - 60)}password=s3cret-password ${'y'.repeat(MB)}"`;
    const err = normaliseDriverError(new Error(raw), 'QUERY_FAILED');
    expect(err.message).not.toContain('s3cret');
    expect(err.message).toMatch(/… \(\d+ more characters\)$/);
    expect(normaliseDriverError(new Error('could not connect to "postgres://u:s3cret@h/d"'), 'QUERY_FAILED').message).toContain('u:***@h');
  });

  it("in a refusal to set context values passes the same masks, and nothing else's value", () => {
    const err = contextUnavailable('set_config', new Error('refused "a-agentpw7-c" with password=s3cret-password'));
    expect(err.code).toBe('CONTEXT_UNAVAILABLE');
    expect(err.message).toContain('"a-agentpw7-c"');
    expect(err.message).not.toContain('s3cret');
  });
});

describe('a connect error (no agent text in it)', () => {
  it("has the connection's own password scrubbed, whole before it is cut", () => {
    const secret = 's3cret-password';
    const raw = `could not connect: "${'x'.repeat(DRIVER_MESSAGE_CHARS - 60)}${secret}${'y'.repeat(MB)}"`;
    const err = normaliseConnectError(new Error(raw), 'CONNECT_FAILED', [secret], { sqlState: '28P01' });
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).not.toContain('s3cret');
    expect(err.message).toMatch(/… \(\d+ more characters\)$/);
    expect(err.message.length).toBeLessThan(DRIVER_MESSAGE_CHARS + 40);
    expect(err.details).toEqual({ sqlState: '28P01' });
  });
});
