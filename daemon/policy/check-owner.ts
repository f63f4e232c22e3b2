import { AsyncLocalStorage } from 'node:async_hooks';

const owners = new AsyncLocalStorage<string>();

/**
 * Runs `call` on behalf of `owner` (one MCP session): every statement check it awaits, however
 * deep in the services, is queued as that owner's, so the worker threads take turns between
 * owners (off-thread.ts) and one session's statements cannot keep another's waiting.
 */
export function asCheckOwner<T>(owner: string, call: () => T): T {
  return owners.run(owner, call);
}

/** Whose check this is: the session that runs the call, or '' for calls of no session (the CLI, the daemon API). */
export function checkOwner(): string {
  return owners.getStore() ?? '';
}
