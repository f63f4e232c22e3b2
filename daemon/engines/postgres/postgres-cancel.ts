import { connect, type Socket } from 'node:net';

/** Where a cancel request goes: the host and port the session itself was opened to. */
export interface CancelTarget {
  readonly host?: string;
  readonly port?: number;
}

/** The protocol's CancelRequest code (1234 in the high 16 bits, 5678 in the low). */
const CANCEL_REQUEST_CODE = 80877102;

/**
 * Sends the protocol's CancelRequest for the session with `pid` and `secretKey` on a new
 * connection, as libpq's PQcancel does, and resolves once the other side has closed it (it
 * answers nothing). Unlike `pg_cancel_backend`, it names the session by the key the server —
 * or a pooler such as PgBouncer, which maps it to the backend running that client's statement —
 * gave at connect time, so it reaches the right statement behind a pooler too. Rejects when the
 * connection cannot be made within `timeoutMs`.
 */
export function sendCancelRequest(target: CancelTarget, pid: number, secretKey: number, timeoutMs = 3000): Promise<void> {
  const port = target.port ?? 5432;
  const host = target.host ?? 'localhost';
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  packet.writeInt32BE(pid, 8);
  packet.writeInt32BE(secretKey, 12);
  return new Promise((resolve, reject) => {
    const socket: Socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
    const timer = setTimeout(() => socket.destroy(new Error(`no answer from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    // Written without a half-close, then held open until the other side closes (as PQcancel
    // does): a pooler that sees the requester hang up first drops the request.
    socket.once('connect', () => socket.write(packet));
    socket.once('end', () => socket.destroy());
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve();
    });
    socket.resume();
  });
}
