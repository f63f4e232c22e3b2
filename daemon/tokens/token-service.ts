import { createHash, randomBytes } from 'node:crypto';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { CreatedToken, CreateTokenRequest, TokenInfo } from '../../shared/token-schemas.js';
import type { TokenRow } from '../registry/registry.js';

/** What the service needs from the registry. */
export interface TokenStore {
  listTokens(): TokenRow[];
  findToken(hash: string): TokenRow | undefined;
  addToken(row: Omit<TokenRow, 'last_used_at'>): boolean;
  removeToken(label: string): boolean;
  touchToken(label: string, at: string): void;
}

/** Who a valid token belongs to. */
export interface TokenGrant {
  readonly label: string;
  /** The only connection the token opens; null for any. */
  readonly connection: string | null;
  /** The context values the token is bound to: its holder cannot give these names on the URL. */
  readonly context?: Readonly<Record<string, string>>;
}

export interface TokenServiceOptions {
  /** Throws CONNECTION_NOT_FOUND unless a registry connection of that name exists. */
  readonly assertConnection: (name: string) => void;
  /** A connection's declared context names, to check the values a token is bound to. */
  readonly contextNames?: (name: string) => readonly string[];
  /** `last used` is written at most this often per token (default a minute): a request is not a disk write. */
  readonly touchIntervalMillis?: number;
  readonly now?: () => Date;
}

/** Every token starts so; a leaked one is easy to recognise (secret scanners, logs). */
export const TOKEN_PREFIX = 'hanactl_';

/** The sha256 of a token, hex: what the registry keeps. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function info(row: TokenRow): TokenInfo {
  const context = row.context ? Object.keys(JSON.parse(row.context) as Record<string, string>) : [];
  return {
    label: row.label,
    connection: row.connection,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    ...(context.length > 0 ? { context } : {}),
  };
}

/**
 * Bearer tokens for MCP over HTTP. A token is 32 random bytes shown once, at creation; the
 * registry keeps its sha256 only, so neither the registry nor a list can give it back. A token
 * may be limited to one connection's endpoint. Revoking takes effect on the next request.
 */
export class TokenService {
  readonly #store: TokenStore;
  readonly #options: TokenServiceOptions;
  readonly #touched = new Map<string, number>();

  constructor(store: TokenStore, options: TokenServiceOptions) {
    this.#store = store;
    this.#options = options;
  }

  create(request: CreateTokenRequest): CreatedToken {
    if (request.connection) this.#options.assertConnection(request.connection);
    const context = this.#boundContext(request);
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = {
      label: request.label,
      hash: hashToken(token),
      connection: request.connection ?? null,
      created_at: this.#now().toISOString(),
      context: context ? JSON.stringify(context) : null,
    };
    if (!this.#store.addToken(row)) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `A token labelled "${request.label}" exists already; revoke it first (\`${cliCommand()} token revoke ${request.label}\`) or choose another label.`,
      );
    }
    return { ...info({ ...row, last_used_at: null }), token };
  }

  list(): TokenInfo[] {
    return this.#store.listTokens().map(info);
  }

  revoke(label: string): void {
    if (!this.#store.removeToken(label)) {
      const labels = this.#store.listTokens().map((t) => t.label);
      const known = labels.length > 0 ? `Tokens: ${labels.join(', ')}.` : 'There are no tokens.';
      throw new HanactlError('NOT_FOUND', `There is no token labelled "${label}". ${known}`);
    }
    this.#touched.delete(label);
  }

  /** The grant of a valid token, else undefined; notes its use (at most once per interval). */
  verify(token: string): TokenGrant | undefined {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    const row = this.#store.findToken(hashToken(token));
    if (!row) return undefined;
    const now = this.#now();
    const last = this.#touched.get(row.label);
    if (last === undefined || now.getTime() - last >= (this.#options.touchIntervalMillis ?? 60_000)) {
      this.#touched.set(row.label, now.getTime());
      this.#store.touchToken(row.label, now.toISOString());
    }
    return {
      label: row.label,
      connection: row.connection,
      ...(row.context ? { context: JSON.parse(row.context) as Record<string, string> } : {}),
    };
  }

  /** The context values a new token is bound to, names upper-cased and checked against its connection. */
  #boundContext(request: CreateTokenRequest): Record<string, string> | undefined {
    const entries = Object.entries(request.context ?? {});
    if (entries.length === 0) return undefined;
    if (!request.connection) {
      throw new HanactlError(
        'INVALID_REQUEST',
        'Context values belong to one connection: give --connection <name> with --context NAME=value.',
      );
    }
    const declared = this.#options.contextNames?.(request.connection) ?? [];
    const bound: Record<string, string> = {};
    for (const [rawName, value] of entries) {
      const name = rawName.trim().toUpperCase();
      if (!declared.includes(name)) {
        const names = declared.length > 0 ? `it declares ${declared.join(', ')}` : 'it declares none';
        throw new HanactlError('CONTEXT_INVALID', `"${request.connection}" has no context parameter ${name} (${names}).`);
      }
      bound[name] = value;
    }
    return bound;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }
}
