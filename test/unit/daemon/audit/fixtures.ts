import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEntry } from '../../../../daemon/audit/audit-store.js';

/** A fresh temp folder per test file, removed by `dispose`. */
export function tempDir(): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-audit-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An entry with plausible defaults; `over` replaces fields. */
export function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    at: new Date().toISOString(),
    queryId: 'q1',
    session: 's1',
    client: 'test-client',
    clientVersion: '1.0.0',
    project: '/work/project',
    connection: 'db',
    tool: 'run_query',
    statement: 'SELECT 1',
    paramCount: 0,
    rows: 1,
    truncated: false,
    durationMs: 1.5,
    outcome: 'ok',
    errorCode: null,
    rule: null,
    ...over,
  };
}
