import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installRoot } from './install-root.js';

let cached: string | undefined;

/** hanactl's version, from its package.json. */
export function hanactlVersion(): string {
  if (cached) return cached;
  try {
    cached = (JSON.parse(readFileSync(join(installRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    cached = '0.0.0';
  }
  return cached;
}
