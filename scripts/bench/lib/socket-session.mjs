// An MCP session on the daemon's socket with no relay process in between: the SDK's Client over a
// transport that does what shim/main.ts does (one hello line, then newline-delimited JSON-RPC).
// The latency figure uses it to tell the relay's cost apart from the daemon's.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

class DaemonSocketTransport {
  #socket;
  #buffer = new ReadBuffer();

  constructor(path, hello) {
    this.path = path;
    this.hello = hello;
  }

  start() {
    return new Promise((resolve, reject) => {
      const socket = connect(this.path);
      this.#socket = socket;
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.onerror?.(err));
        socket.write(`${JSON.stringify(this.hello)}\n`);
        resolve();
      });
      socket.on('data', (chunk) => {
        this.#buffer.append(chunk);
        for (;;) {
          let message;
          try {
            message = this.#buffer.readMessage();
          } catch (err) {
            this.onerror?.(err); // a daemon line that is not JSON-RPC (a refusal): said, not answered
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      });
      socket.on('close', () => this.onclose?.());
    });
  }

  async send(message) {
    this.#socket.write(serializeMessage(message));
  }

  async close() {
    this.#socket?.end();
  }
}

/**
 * Opens one session on `socketPath` as a relay started with `--connection connection` in `cwd`
 * would; `context` holds the values its `MCP_CONTEXT_<NAME>` variables would give.
 */
export async function openSocketSession({ socketPath, connection, cwd, cleanup, context = {} }) {
  const hello = { hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, cwd, connection, context };
  const client = new Client({ name: 'hanactl-bench-socket', version: '1.0.0' });
  const forget = cleanup.add('close the daemon socket session', () => client.close());
  await client.connect(new DaemonSocketTransport(socketPath, hello));
  return {
    client,
    async query(sql) {
      const result = await client.callTool({ name: 'run_query', arguments: { sql } });
      if (result.isError) throw new Error(`daemon socket session: ${result.content?.map((c) => c.text).join(' ')}`);
      return result;
    },
    close: forget,
  };
}
