#!/usr/bin/env node
// Bundles the shim, a byte relay, into one small file (dist/shim.cjs) that editors start
// through bin/hanactl-mcp. A V8 startup snapshot of it was measured slower to start than the
// bundle itself (the snapshot is megabytes, the relay a few kilobytes), so none is built.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'shim.cjs');

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

// Left by earlier builds: never used again.
for (const stale of ['shim.blob', 'shim.node']) rmSync(join(root, 'dist', stale), { force: true });
