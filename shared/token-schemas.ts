import { z } from 'zod';
import { ConnectionNameSchema } from './schemas.js';

/**
 * The token API's bodies (`/v1/tokens`): bearer tokens for the daemon's MCP over HTTP. Only
 * the `hanactl` command line may call these routes (its client header); no tool can.
 */

/** Token labels: letters, digits, `.`, `-` and `_`, 1 to 64 characters. */
export const TOKEN_LABEL_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export const TokenLabelSchema = z.string().regex(TOKEN_LABEL_PATTERN, 'use 1-64 letters, digits, ., - or _');

/** `POST /v1/tokens`. */
export const CreateTokenRequestSchema = z.strictObject({
  label: TokenLabelSchema,
  /** Limits the token to this connection's endpoint (`/mcp/<connection>`); without it, any connection's. */
  connection: ConnectionNameSchema.optional(),
  /**
   * Binds the token to these context values of its connection (needs `connection`): its holder
   * cannot give these names on the URL.
   */
  context: z.record(z.string().max(64), z.string().max(65_536)).optional(),
});
export type CreateTokenRequest = z.infer<typeof CreateTokenRequestSchema>;

/** What `hanactl token list` shows: never the token, which the daemon does not keep. */
export const TokenInfoSchema = z.object({
  label: z.string(),
  connection: z.string().nullable(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  /** The context names the token is bound to (their values are not shown). */
  context: z.array(z.string()).optional(),
});
export type TokenInfo = z.infer<typeof TokenInfoSchema>;

/** The answer to `POST /v1/tokens`: the token itself, this once. */
export const CreatedTokenSchema = TokenInfoSchema.extend({ token: z.string() });
export type CreatedToken = z.infer<typeof CreatedTokenSchema>;

export const TokenListSchema = z.object({ tokens: z.array(TokenInfoSchema) });
export type TokenList = z.infer<typeof TokenListSchema>;

export const RevokedTokenSchema = z.object({ revoked: z.string() });
