import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/hanactl-home.js';

interface Packed {
  files: { path: string }[];
}

/**
 * What `npm pack` puts in the published package (the `files` list of package.json): what the
 * installed CLI runs — bin/ (its CommonJS package.json and .cjs helper included) and the compiled
 * dist/ with the shim bundle — and nothing else: no sources, tests or source maps.
 */
describe('the published package', () => {
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
  const files = packed.status === 0 ? ((JSON.parse(packed.stdout) as Packed[])[0]?.files.map((f) => f.path) ?? []) : [];

  it('holds what the installed CLI needs', () => {
    expect(packed.status, packed.stderr).toBe(0);
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/hanactl.js',
        'bin/hanactl-mcp',
        'bin/package.json',
        'bin/thread-pool.cjs',
        'dist/cli/main.js',
        'dist/daemon/main.js',
        'dist/shim/entry.js',
        'dist/shim.cjs',
      ]),
    );
    // Every module the compiled CLI imports relatively (statically or lazily) is in the package.
    const missing = files
      .filter((f) => f.startsWith('dist/') && f.endsWith('.js'))
      .flatMap((f) => {
        const text = readFileSync(join(REPO, f), 'utf8');
        return [...text.matchAll(/(?:from |import\()'(\.{1,2}\/[^']+\.js)'/g)].map((m) =>
          new URL(m[1] as string, `file:///${f}`).pathname.slice(1),
        );
      })
      .filter((f) => !files.includes(f));
    expect([...new Set(missing)]).toEqual([]);
  });

  it('holds nothing else', () => {
    const other = files.filter(
      (f) => !['package.json', 'README.md', 'LICENSE'].includes(f) && !f.startsWith('bin/') && !f.startsWith('dist/'),
    );
    expect(other).toEqual([]);
    expect(files.filter((f) => f.endsWith('.map') || f.endsWith('.ts') || f === 'dist/shim.blob' || f === 'dist/shim.node')).toEqual([]);
  });
});
