// Figure: the size of the relay session's `tools/list` answer — what every agent session pays in context.
import { openSession } from '../lib/mcp-session.mjs';

export async function measureToolsList(ctx) {
  const session = await openSession({ ...ctx.hanactl.shimCommand('bench'), cleanup: ctx.cleanup, label: 'hanactl relay' });
  try {
    // The message as it came off the wire (the SDK's typed result would drop fields it does not know).
    let wire;
    const { transport } = session;
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (Array.isArray(message?.result?.tools)) wire = message;
      deliver?.call(transport, message, extra);
    };
    await session.client.listTools();
    if (!wire) throw new Error('no tools/list answer was seen on the wire');
    const { tools } = wire.result;
    const largest = tools
      .map((t) => ({ name: t.name, bytes: Buffer.byteLength(JSON.stringify(t)) }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 3);
    return {
      bytes: Buffer.byteLength(JSON.stringify(wire.result)),
      messageBytes: Buffer.byteLength(JSON.stringify(wire)),
      tools: tools.length,
      largest,
    };
  } finally {
    await session.close();
  }
}
