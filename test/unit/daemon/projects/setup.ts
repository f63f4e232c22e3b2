import { ProjectFiles } from '../../../../daemon/projects/project-files.js';
import { ProjectService, type ProjectServiceDeps } from '../../../../daemon/projects/project-service.js';
import { SessionSources } from '../../../../daemon/projects/session-sources.js';
import { TrustStore, type TrustTable } from '../../../../daemon/projects/trust-store.js';
import type { TrustedFolder } from '../../../../shared/project-schemas.js';

/** A trust table in memory (the registry-backed one has its own test). */
export function memoryTrust(): TrustTable {
  const rows = new Map<string, string>();
  return {
    listTrusted: (): TrustedFolder[] => [...rows].map(([path, createdAt]) => ({ path, createdAt })),
    addTrusted: (path, createdAt) => !rows.has(path) && Boolean(rows.set(path, createdAt)),
    removeTrusted: (path) => rows.delete(path),
  };
}

/** A project service over real files, trusting `trusted` (trusted through the store, so by real path). */
export function projectService(
  trusted: readonly string[],
  hanaCliHome = '/nonexistent/.hana-cli',
  onReplaced?: ProjectServiceDeps['onReplaced'],
) {
  const trust = new TrustStore(memoryTrust());
  for (const dir of trusted) trust.trust(dir);
  const files = new ProjectFiles(trust);
  const service = new ProjectService({ trust, files, hanaCliHome, sessions: new SessionSources(), ...(onReplaced ? { onReplaced } : {}) });
  return { trust, files, service };
}

/** A secret planted in fixtures: it must never appear in any answer, message or report. */
export const SECRET = 'pw-planted-7f3a9c';
