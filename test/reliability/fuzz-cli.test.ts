import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { apiClient } from './helpers/daemon-api.js';
import { unexpectedErrors } from './helpers/daemon-log.js';
import { report } from './helpers/figures.js';
import { FUZZ_RUNS, FUZZ_TEST_TIMEOUT_MS, fuzzParams, nastyString } from './helpers/fuzz.js';
import { daemonPid, disposeHome } from './helpers/lite-daemon.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('fuzzcli');
/** Each case spawns `hanactl` four times at once (a node process each): fewer cases than the in-process fuzzers. */
const CASES = Math.max(4, Math.round(FUZZ_RUNS / 16));

/** encodeURIComponent throws on a lone surrogate; a user name in a URL is always well formed. */
const encodeUser = (s: string) =>
  encodeURIComponent(s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));

/** argv cannot carry NUL; everything else goes. */
const arg = (a: fc.Arbitrary<string>) => a.map((s) => s.replace(/\0/g, ''));

const nameArb = arg(
  fc.oneof(nastyString, fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), fc.constantFrom('-x', '--help', '--password-stdin', 'a b')),
);
const urlArb = arg(
  fc.oneof(
    nastyString,
    fc.webUrl(),
    fc
      .tuple(
        fc.constantFrom('postgres://', 'postgresql://', 'mysql://', 'mariadb://', 'hana://', 'sqlite:', 'sqlite://', 'oracle://', 'file:'),
        nastyString,
      )
      .map(([a, b]) => a + b),
    fc
      .tuple(fc.constantFrom('postgres', 'mysql', 'hana'), nastyString, fc.integer({ min: -1, max: 100_000 }), nastyString, nastyString)
      .map(([s, user, port, db, q]) => `${s}://${encodeUser(user)}@127.0.0.1:${port}/${db}?${q}`),
    fc.constantFrom(
      'sqlite::memory:',
      'postgres://u:pw@h/db',
      'postgres://u@h/db?password=x',
      'hana://u@h:443?encrypt=false',
      'mysql://[::1',
      'postgres://u@%zz/db',
    ),
  ),
);
const extraArb = fc.subarray(['--allow-write', '--replace', '--json', '--description', 'd', '--context', 'A,B,a b,', '--no-password'], {
  maxLength: 4,
});

describe('`hanactl add` with arbitrary names and URLs', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  const exits = new Map<string, number>();
  let pid: number;

  beforeAll(async () => {
    scan.addHome(home.dir);
    await home.ok(['daemon', 'start']);
    pid = await daemonPid(home);
  });

  afterAll(() => disposeHome(home));

  it(
    'exits 0, 1 or 2 with a sentence, never a stack trace or an unexpected error',
    async () => {
      const one = fc.tuple(nameArb, urlArb, extraArb, fc.boolean());
      await fc.assert(
        fc.asyncProperty(fc.array(one, { minLength: 4, maxLength: 4 }), async (batch) => {
          await Promise.all(
            batch.map(async ([name, url, extra, stdin]) => {
              const args = [
                'add',
                '--no-test',
                name,
                url,
                ...extra,
                ...(stdin ? ['--password-stdin'] : extra.includes('--no-password') ? [] : ['--no-password']),
              ];
              const r = await home.run(args, { input: stdin ? SECRET : '', timeoutMs: 20_000 });
              exits.set(String(r.code), (exits.get(String(r.code)) ?? 0) + 1);
              scan.add('cli', r.stdout + r.stderr);
              const said = `${JSON.stringify(args)} -> ${r.code}: ${r.stderr}`;
              expect([0, 1, 2], said).toContain(r.code);
              expect(r.stderr, said).not.toMatch(/\n\s+at .+(:\d+:\d+|\(node:)/);
              expect(r.stderr, said).not.toMatch(/unexpected error|TypeError|RangeError|ReferenceError/);
              if (r.code !== 0) expect(r.stderr.trim(), said).toMatch(/^(hanactl: |error: )\S/m);
            }),
          );
        }),
        fuzzParams(CASES),
      );
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it('kept serving: same daemon, no "unexpected error" in the log, the planted password nowhere', async () => {
    const api = apiClient(home);
    try {
      expect((await api.health()).pid).toBe(pid);
    } finally {
      api.close();
    }
    await home.stop();
    const unexpected = unexpectedErrors(home.dir);
    const { hits, scannedFiles } = scan.hits();
    report('fuzz-cli', {
      adds: [...exits.values()].reduce((a, b) => a + b, 0),
      exits: Object.fromEntries(exits),
      unexpectedErrorLines: unexpected.length,
      secretHits: hits.length,
      scannedFiles,
    });
    expect(unexpected).toEqual([]);
    expect(hits).toEqual([]);
  });
});
