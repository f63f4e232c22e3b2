import { z } from 'zod';
import { ConnectionNameSchema } from './schemas.js';

/**
 * The grant API's bodies (`/v1/grants`): which signed-in callers of MCP over HTTP may use which
 * connection. Only the `hanactl` command line may call these routes; no tool can.
 */

/** A token's `sub`, a value of its `groups` or `roles` claim, or `*` for every signed-in caller. */
export const PrincipalSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\s\p{Cc}]+$/u, 'a subject or group without spaces or control characters');

/** `POST /v1/grants` and `DELETE /v1/grants`. */
export const GrantRequestSchema = z.strictObject({ connection: ConnectionNameSchema, principal: PrincipalSchema });
export type GrantRequest = z.infer<typeof GrantRequestSchema>;

export const GrantInfoSchema = z.object({ connection: z.string(), principal: z.string(), createdAt: z.string() });
export type GrantInfo = z.infer<typeof GrantInfoSchema>;

export const GrantListSchema = z.object({ grants: z.array(GrantInfoSchema) });

/** The answer to a grant or a revoke: whether anything changed. */
export const GrantChangeSchema = z.object({ connection: z.string(), principal: z.string(), changed: z.boolean() });
export type GrantChange = z.infer<typeof GrantChangeSchema>;
