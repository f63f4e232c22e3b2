import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');

/** A TCP relay to the real server that can reset its client-side sockets (an RST, as a dying network or host sends). */
class ResettingRelay {
  readonly #server: Server;
  readonly #clients = new Set<Socket>();
  port = 0;

  constructor(host: string, port: number) {
    this.#server = createServer((client) => {
      const upstream = connect(port, host);
      this.#clients.add(client);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        this.#clients.delete(client);
        upstream.destroy();
        client.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  reset(): void {
    for (const socket of this.#clients) socket.resetAndDestroy();
  }

  close(): Promise<void> {
    this.reset();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

describe.runIf(available)('PostgreSQL: the connection reset under a running statement', () => {
  let relay: ResettingRelay;
  let driver: Driver;

  beforeAll(async () => {
    const { target, password } = parseConnectionUrl(PG_URL);
    relay = new ResettingRelay(target.host ?? '127.0.0.1', target.port ?? 5432);
    await relay.listen();
    const factory = await loadDriverFactory('postgres');
    driver = factory({ ...target, host: '127.0.0.1', port: relay.port }, password !== undefined ? { password } : {}, {
      connectTimeoutMs: 5000,
    });
  });

  afterAll(() => relay?.close());

  it('fails the call saying the connection was lost and marks it broken, never a bare socket code', async () => {
    const conn = await driver.connect();
    const running = conn.execute('SELECT count(*) FROM generate_series(1, 200000000)', [], {
      maxRows: 1,
      timeoutMs: 30_000,
      readOnly: true,
    });
    setTimeout(() => relay.reset(), 300);
    const err = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HanactlError);
    expect((err as HanactlError).code).toBe('CONNECT_FAILED');
    expect((err as HanactlError).message).toMatch(
      /^The connection to PostgreSQL was lost during the call \(.*ECONNRESET.*\); the pool opens a new one for the next call, which can be retried\.$/,
    );
    expect(conn.broken).toBe(true);
    await conn.close();

    const next = await driver.connect();
    expect((await next.execute('SELECT 1 AS one', [], { maxRows: 1, timeoutMs: 5000, readOnly: true })).rows).toEqual([{ one: 1 }]);
    await next.close();
  });
  it('ends the statement on the server once its client is gone, though no cancel was sent', async () => {
    const mark = `lost_mark_${process.pid}`;
    const conn = await driver.connect();
    const running = conn.execute(
      `SELECT count(*) AS ${mark} FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b`,
      [],
      {
        maxRows: 1,
        timeoutMs: 600_000,
        readOnly: true,
      },
    );
    running.catch(() => {});
    const watcher = new pg.Client({ connectionString: PG_URL });
    await watcher.connect();
    try {
      const runningOnServer = async () =>
        Number(
          (
            await watcher.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
              [mark],
            )
          ).rows[0].n,
        );
      while ((await runningOnServer()) === 0) await new Promise((r) => setTimeout(r, 20));
      // The client vanishes (the network path is cut): no cancel, no terminate; only the server can notice.
      relay.reset();
      await expect(running).rejects.toThrow(/connection to PostgreSQL was lost/);
      const deadline = Date.now() + 15_000;
      while ((await runningOnServer()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // Far below its 600 s limit.
      expect(await runningOnServer()).toBe(0);
    } finally {
      await watcher.end();
      await conn.close().catch(() => {});
    }
  });
});
