import { describe, expect, test } from 'vitest';
import { resolveContextValues } from '../../../../daemon/context/context-values.js';

describe('a caller scoped by context values', () => {
  const check = (declared: string[], supplied: Record<string, string>, strict = false) =>
    resolveContextValues({ declared, supplied, engine: 'postgres', strict, connection: 'everything' });

  test('may not use a connection that declares none: its calls there would see every row', () => {
    expect(() => check([], { CUSTOMER_ID: 'A' })).toThrow(
      expect.objectContaining({
        code: 'CONTEXT_INVALID',
        message: expect.stringMatching(/carries context values \(CUSTOMER_ID\) and connection "everything" declares none/),
      }),
    );
    expect(() => check([], { customer_id: 'A', tenant: 'x' })).toThrow(/\(CUSTOMER_ID, TENANT\)/);
  });

  test('uses a connection that declares its names, and ignores values for other connections there', () => {
    expect(check(['CUSTOMER_ID'], { CUSTOMER_ID: 'A', EMPLOYEE_ID: '7' })).toEqual({ CUSTOMER_ID: 'A' });
  });

  test('a caller without values uses a connection without names', () => {
    expect(check([], {})).toEqual({});
  });
});
