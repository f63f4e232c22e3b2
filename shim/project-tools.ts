import { isAbsolute, resolve } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { HanactlError } from '../shared/errors.js';
import type { DetectResult } from '../shared/project-schemas.js';
import type { ProjectContext } from './project-context.js';
import type { SessionState } from './session-state.js';
import { guarded, ok } from './tool-result.js';

/** The detection as text: the root, what it yields, then each source in order and why. */
export function renderDetection(result: DetectResult, active: string | null): string {
  const cap = result.cap.isCap ? `a CAP project (${result.cap.signals.join(', ')})` : 'a project';
  const lines = [`${result.root} is ${cap}; it is now this session's project.`];
  if (result.connections.length === 0) {
    lines.push(`It yields no connection; the session uses ${active ? `"${active}"` : 'no connection'} (see the sources below).`);
  } else {
    lines.push(`Connections (from ${result.connections[0]?.source ?? 'its first source'}; first match wins):`);
    for (const c of result.connections) lines.push(`  ${c.name} (${c.engine})${c.name === active ? ' [active]' : ''}`);
  }
  lines.push('Sources, in order:');
  const absent = result.sources.filter((s) => s.status === 'absent').map((s) => s.source);
  for (const s of result.sources) if (s.status !== 'absent') lines.push(`  ${s.status} ${s.source}: ${s.reason}`);
  if (absent.length > 0) lines.push(`  absent: ${absent.join(', ')}`);
  return lines.join('\n');
}

/**
 * `detect_project {path?}`: the project folder (the session's, or the one holding `path`) and
 * the connections its files yield, names and engines only; with a path the session moves to
 * that project. The daemon reads the files, and only in folders a person trusted: an untrusted
 * folder is an isError naming the `hanactl trust` command, which no tool can run.
 */
export function registerProjectTools(server: McpServer, state: SessionState, project: ProjectContext): void {
  server.registerTool(
    'detect_project',
    {
      title: 'Detect project',
      description:
        "Find the project's own database connections (CAP cds.requires.db, .cdsrc-private.json, default-env.json, .env...). With path, switch this session to that project.",
      inputSchema: {
        path: z.string().min(1).max(4096).optional().describe('A folder in the project (absolute, or relative to the current project).'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ path }) =>
      guarded(async () => {
        await state.settled();
        const base = state.project;
        if (!path && !base) throw new HanactlError('INVALID_REQUEST', 'This session has no project folder yet; pass path.');
        const target = path ? (base ? resolve(base, path) : path) : (base as string);
        if (!isAbsolute(target))
          throw new HanactlError('INVALID_REQUEST', `Give an absolute path; "${path}" has no project folder to be relative to.`);
        const result = await project.detect(target);
        return ok(renderDetection(result, state.active), { ...result, active: state.active });
      }),
  );
}
