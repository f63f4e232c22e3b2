import fc from 'fast-check';

/** Cases per property: 200 in CI, more through `node scripts/fuzz.mjs --runs N`. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200);

/** A property stops (passing with the cases it ran) after this long; its test times out a minute later. */
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 150_000);
export const FUZZ_TEST_TIMEOUT_MS = TIME_LIMIT_MS + 60_000;

/** fast-check settings shared by every fuzz suite; the seed is printed so a failure can be replayed. */
export function fuzzParams(runs = FUZZ_RUNS): { numRuns: number; seed: number; endOnFailure: boolean; interruptAfterTimeLimit: number } {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
  return { numRuns: runs, seed, endOnFailure: true, interruptAfterTimeLimit: TIME_LIMIT_MS };
}

/** Strings that break naive code: control characters, lone surrogates, NUL, quotes, path tricks. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\0',
    '\uD800',
    '\uDFFF',
    '../../etc/passwd',
    '%00',
    '%',
    '%zz',
    '\\',
    '"',
    "'",
    '`',
    '$' + '{x}',
    'project:',
    'project:x',
    '__proto__',
    'constructor',
    'toString',
    '-1',
    'NaN',
    '1e309',
    'a'.repeat(65),
    'a'.repeat(5000),
  ),
);

/** A JSON value nested `depth` levels deep (arrays or objects). */
export function deep(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** Any JSON value: fast-check's, with nasty strings, huge strings and deep nesting mixed in. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 600_000 }).map((n) => 'é'.repeat(n)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 100, max: 1500 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([d, k]) => deep(d, k)),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), [], {}, [null], { '': null }) },
);

/** A valid body with one field mutated: replaced by any JSON, deleted, or joined by an unknown field. */
export function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  if (keys.length === 0)
    return fc.oneof(
      fc.constant(valid),
      fc.tuple(nastyString, anyJson).map(([k, v]) => ({ [k]: v })),
    );
  return fc.oneof(
    fc.tuple(fc.constantFrom(...keys), anyJson).map(([k, v]) => ({ ...valid, [k]: v })),
    fc.constantFrom(...keys).map((k) => {
      const { [k]: _dropped, ...rest } = valid;
      return rest;
    }),
    fc.tuple(nastyString, anyJson).map(([k, v]) => ({ ...valid, [k]: v })),
    fc.constant(valid),
  );
}
