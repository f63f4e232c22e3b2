import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** hanactl's version, from its package.json (found from source or from dist/). */
export function hanactlVersion(): string {
  if (cached) return cached;
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'hanactl') return (cached = pkg.version);
    } catch {
      // try the next location
    }
  }
  return (cached = '0.0.0');
}
