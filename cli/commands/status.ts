import { visible } from '../../shared/terminal-text.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';

/** `hanactl status`: the daemon, its pools and the sessions talking to it. */
export async function status(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const s = await ctx.daemon.status();
  if (options.json) return printJson(ctx, s);
  ctx.out(`daemon   pid ${s.daemon.pid}, version ${s.daemon.version}, key from ${s.daemon.keySource}, socket ${s.daemon.socket}`);
  ctx.out('');
  ctx.out(s.pools.length === 0 ? 'pools    none open yet' : renderPools(s.pools));
  ctx.out('');
  if (s.sessions.length === 0) ctx.out('sessions none');
  else
    ctx.out(
      renderTable(
        ['session', 'client', 'project', 'connection', 'calls', 'last seen'],
        s.sessions.map((x) => ({
          session: x.id.slice(0, 8),
          // What the agent's client named itself, and its folder: shown escaped.
          client: visible(`${x.client.name}${x.client.version ? ` ${x.client.version}` : ''}`),
          project: visible(x.project ?? ''),
          connection: visible(x.connection ?? ''),
          calls: x.calls,
          'last seen': x.lastSeenAt,
        })),
      ),
    );
}

function renderPools(pools: Awaited<ReturnType<CliContext['daemon']['pools']>>): string {
  return renderTable(
    ['target', 'connections', 'total', 'idle', 'in use', 'waiting', 'ending', 'created', 'destroyed', 'errors', 'max', 'per session'],
    pools.map((p) => ({
      target: p.target,
      connections: p.connections.join(','),
      total: p.total,
      idle: p.idle,
      'in use': p.inUse,
      waiting: p.waiting,
      ending: p.ending,
      created: p.created,
      destroyed: p.destroyed,
      errors: p.errors,
      max: p.max,
      'per session': p.perSession,
    })),
  );
}

/** `hanactl pools`: per target, total / idle / in use / waiting / ending, lifetime counters, and the cap and one session's share. */
export async function pools(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const list = await ctx.daemon.pools();
  if (options.json) return printJson(ctx, { pools: list });
  ctx.out(list.length === 0 ? 'No pools are open yet; they open on the first query of a connection.' : renderPools(list));
}
