import type { ProjectScope } from '../shared/project-schemas.js';
import type { SessionState } from './session-state.js';

/**
 * What a listing or query carries so the daemon can resolve `project:<name>`: the session's
 * project folder (a hint; the daemon checks trust) and the session id. Waits first for any
 * project change in flight (roots changed, detect_project), so a call never straddles two projects.
 */
export async function projectScope(state: SessionState): Promise<ProjectScope> {
  await state.settled();
  const session = await state.sessionId();
  return { ...(state.project ? { project: state.project } : {}), ...(session ? { session } : {}) };
}
