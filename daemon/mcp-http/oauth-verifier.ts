import { createRemoteJWKSet, errors, type JWTVerifyGetKey, jwtVerify } from 'jose';

/** The identity provider this broker trusts, as a person configured it. */
export interface OAuthSettings {
  /** The issuer URL: tokens must carry it as `iss`, and its discovery document names the JWKS. */
  readonly issuer: string;
  /** The audience tokens must be issued for (`aud`): this broker's resource identifier. */
  readonly audience: string;
  /**
   * After a JWKS fetch, no other fetch for this long (jose's cooldown; default 30 s): a token
   * signed with an unknown key triggers at most one fetch per period.
   */
  readonly jwksCooldownMillis?: number;
}

/** A signed-in caller, from a valid access token. */
export interface OAuthCaller {
  readonly subject: string;
  readonly issuer: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Why a token was refused; the sentence names the reason, never the token. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
}

/** The discovery documents an issuer may publish (OpenID Connect first, then RFC 8414). */
function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  return [`${url.origin}${path}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'the token was issued for another audience';
    if (err.claim === 'iss') return 'the token was issued by another issuer';
    return `the token's "${err.claim}" claim is not valid`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's JWKS signed the token";
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not allowed";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'the token is not a well-formed JWT';
  return 'the token cannot be verified';
}

/**
 * Verifies JWT access tokens of one issuer for one audience (issuer, audience, expiry,
 * signature) against the issuer's JWKS, found through its discovery document. The document is
 * fetched on the first token, not at start, so the broker starts while the provider is down;
 * a failed fetch is retried on the next token. jose refetches the JWKS when a token names an
 * unknown key id, so a key the provider rotated in is used without a restart.
 */
export class OAuthVerifier {
  readonly settings: OAuthSettings;
  #keys: Promise<JWTVerifyGetKey> | undefined;

  constructor(settings: OAuthSettings) {
    this.settings = settings;
  }

  async verify(token: string): Promise<OAuthCaller> {
    const keys = await this.#jwks();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        requiredClaims: ['exp', 'sub'],
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      }));
    } catch (err) {
      throw new InvalidTokenError(reasonOf(err));
    }
    return { subject: String(payload.sub), issuer: this.settings.issuer, claims: payload };
  }

  #jwks(): Promise<JWTVerifyGetKey> {
    this.#keys ??= this.#discover().catch((err) => {
      this.#keys = undefined;
      throw err;
    });
    return this.#keys;
  }

  async #discover(): Promise<JWTVerifyGetKey> {
    let lastProblem = 'no discovery document';
    for (const url of discoveryUrls(this.settings.issuer)) {
      let doc: { issuer?: unknown; jwks_uri?: unknown };
      try {
        const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
        if (!response.ok) {
          lastProblem = `${url} answered ${response.status}`;
          continue;
        }
        doc = (await response.json()) as typeof doc;
      } catch (err) {
        lastProblem = `${url}: ${err instanceof Error ? err.message : String(err)}`;
        continue;
      }
      if (doc.issuer !== this.settings.issuer) {
        throw new InvalidTokenError(
          `the identity provider's discovery document names the issuer "${String(doc.issuer)}", not "${this.settings.issuer}"`,
        );
      }
      if (typeof doc.jwks_uri !== 'string') throw new InvalidTokenError(`the discovery document ${url} names no jwks_uri`);
      return createRemoteJWKSet(new URL(doc.jwks_uri), { cooldownDuration: this.settings.jwksCooldownMillis ?? 30_000 });
    }
    throw new ProviderUnavailableError(`the identity provider ${this.settings.issuer} cannot be reached (${lastProblem})`);
  }
}

/** The identity provider's discovery document cannot be fetched: the caller may retry (503). */
export class ProviderUnavailableError extends Error {
  override readonly name = 'ProviderUnavailableError';
}
