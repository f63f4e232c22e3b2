import { isProjectRef, type ProjectScope } from '../../shared/project-schemas.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import type { ConnectionService } from '../registry/connection-service.js';
import type { ProjectService } from './project-service.js';

/**
 * One lookup for every call: `project:<name>` is resolved in the call's project folder (within
 * trust), any other name in the encrypted registry. The composition root hands this to the
 * query service as its `resolve`.
 */
export function createConnectionResolver(
  connections: Pick<ConnectionService, 'resolve'>,
  projects: Pick<ProjectService, 'resolve'>,
): (name: string, scope?: ProjectScope) => ConnectionRecord {
  return (name, scope) => (isProjectRef(name) ? projects.resolve(name, scope ?? {}) : connections.resolve(name));
}
