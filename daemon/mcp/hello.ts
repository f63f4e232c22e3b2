import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { HanactlError } from '../../shared/errors.js';
import { hanaCliFromEnv, hanaCliProjectPath } from '../../shared/hana-cli-env.js';
import { overBounds } from '../../shared/json-bounds.js';
import type { ShimOptions } from '../../shim/session-state.js';

/** A relay's first line is at most this long (VCAP_SERVICES may be large). */
export const MAX_HELLO_BYTES = 2 * 1024 * 1024;

/**
 * The relay's first line on the daemon socket (shim/relay.ts writes it): who it is, the options
 * it was started with, its working folder and the `MCP_CONTEXT_*` and `VCAP_SERVICES` values of
 * its environment, and the session id it resumes under after a daemon restart.
 */
export const RelayHelloSchema = z.strictObject({
  hanactl: z.literal('relay'),
  v: z.literal(1),
  session: z.string().regex(/^[A-Za-z0-9-]{8,64}$/),
  pid: z.number().int().positive(),
  ppid: z.number().int().nonnegative().optional(),
  cwd: z.string().min(1).max(4096),
  connection: z.string().min(1).max(200).optional(),
  project: z.string().min(1).max(4096).optional(),
  connFile: z.string().min(1).max(4096).optional(),
  context: z.record(z.string().max(200), z.string().max(65_536)).optional(),
  vcapServices: z.string().max(1_000_000).optional(),
  /** The relay's `HANA_CLI_*` variables, `HANA_CLI_PASSWORD` only as "set" (shared/hana-cli-env.ts reads them). */
  hanaCliEnv: z.record(z.string().regex(/^HANA_CLI_[A-Z_]{1,40}$/), z.string().max(4096)).optional(),
});
export type RelayHello = z.infer<typeof RelayHelloSchema>;

/** Parses a hello line; anything else is INVALID_REQUEST naming the field. */
export function parseHello(line: string): RelayHello {
  const over = overBounds(Buffer.from(line));
  if (over !== undefined) throw new HanactlError('INVALID_REQUEST', `The relay hello ${over}; a relay's hello holds a few options.`);
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new HanactlError('INVALID_REQUEST', 'The relay hello is not JSON.');
  }
  const parsed = RelayHelloSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'hello'}: ${i.message}`);
  throw new HanactlError(
    'INVALID_REQUEST',
    `The relay hello is not understood (${problems.join('; ')}); the relay and the daemon may be of different versions.`,
  );
}

/**
 * How `hanactl status` names a session before its client says who it is: the program that
 * started the relay (Linux names it in /proc), else "stdio client".
 */
export function relayLabel(hello: RelayHello): string {
  let program = '';
  if (hello.ppid && process.platform === 'linux') {
    try {
      program = readFileSync(`/proc/${hello.ppid}/comm`, 'utf8').trim();
    } catch {
      // gone, or not ours to read
    }
  }
  return program ? `${program} (stdio, pid ${hello.ppid})` : 'stdio client';
}

/**
 * The session options a hello gives: the project is `--project` (relative to the relay's
 * folder), else hana-cli's `HANA_CLI_PROJECT_PATH` when it names a folder (it stands in for the
 * working folder, as in hana-cli), else the relay's folder.
 */
export function helloOptions(hello: RelayHello): ShimOptions {
  const hanaCli = hello.hanaCliEnv ? hanaCliFromEnv(hello.hanaCliEnv) : undefined;
  const project = hello.project
    ? isAbsolute(hello.project)
      ? hello.project
      : resolve(hello.cwd, hello.project)
    : (hanaCliProjectPath(hello.hanaCliEnv ?? {}, hello.cwd) ?? hello.cwd);
  return {
    ...(hello.connection ? { connection: hello.connection } : {}),
    project,
    ...(hello.connFile ? { connFile: hello.connFile } : {}),
    context: { ...hello.context },
    ...(hello.vcapServices !== undefined ? { vcapServices: hello.vcapServices } : {}),
    ...(hanaCli ? { hanaCli } : {}),
    client: { name: relayLabel(hello) },
  };
}
