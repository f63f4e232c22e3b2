#!/usr/bin/env node
// Bundles the shim into one file (dist/shim.cjs) and, where Node can, captures its start-up
// in a V8 startup snapshot (dist/shim.blob): editors then start a session in about half the
// time of a bare MCP SDK server. bin/hanactl-mcp picks the fastest form that is valid.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'shim.cjs');
const blob = join(root, 'dist', 'shim.blob');

await build({
  entryPoints: [join(root, 'shim', 'entry.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: out,
  minify: true,
  define: { HANACTL_BUNDLE: 'true' },
  logLevel: 'warning',
  // import.meta is empty in the bundle by design: entry.ts tells install-root where it lies.
  logOverride: { 'empty-import-meta': 'silent' },
});

rmSync(blob, { force: true });
writeFileSync(join(root, 'dist', 'shim.node'), `${process.execPath}\n`);
const snap = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', out], { cwd: root, encoding: 'utf8' });
if (snap.status !== 0) {
  rmSync(blob, { force: true });
  const why = (snap.stderr || '').split('\n').filter((l) => /^\w*Error\b/.test(l)).pop() ?? `exit ${snap.status}`;
  process.stderr.write(`build-shim: no startup snapshot (${why.trim().slice(0, 200)}); editors use dist/shim.cjs.\n`);
}
