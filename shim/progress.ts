import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/** The part of a tool handler's `extra` that progress reporting uses. */
export type ProgressExtra = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, '_meta' | 'sendNotification'>;

/** How often a long call reports that it is still running. */
export const PROGRESS_INTERVAL_MS = 1000;

/**
 * Runs `work`; when the client asked for progress (`_meta.progressToken`), sends
 * `notifications/progress` every `intervalMs` while it runs, with the elapsed seconds as the
 * (always increasing) progress and `message(seconds)` as the text. No total: a statement's
 * length is unknown. A notification that cannot be sent is dropped; the call goes on.
 */
export async function withProgress<T>(
  extra: ProgressExtra,
  message: (elapsedSeconds: number) => string,
  work: () => Promise<T>,
  intervalMs = PROGRESS_INTERVAL_MS,
): Promise<T> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return work();
  const started = performance.now();
  let last = 0;
  const timer = setInterval(() => {
    // Seconds to the millisecond; the spec wants each value above the last.
    const progress = Math.max(Math.round(performance.now() - started) / 1000, last + 0.001);
    last = progress;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: message(Math.round(progress)) } })
      .catch(() => {});
  }, intervalMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
