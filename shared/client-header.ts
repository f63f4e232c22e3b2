/** Every request to the daemon carries this header; requests without it are refused with 403. */
export const CLIENT_HEADER = 'x-hanactl-client';

/**
 * The client header value of the `hanactl` command line. Routes that only a person may use
 * (trusting folders, importing) require it: a guard against the agent's tools, whose shim
 * sends `hanactl-shim`, not against a local attacker who can send any header.
 */
export const CLI_CLIENT_NAME = 'hanactl-cli';

/**
 * Set by the daemon's own in-process client for an MCP over HTTP session: the one connection
 * that session may see and use. The API then lists only it, and answers about any other as if
 * it did not exist. A socket client sending it only narrows its own view.
 */
export const CONNECTION_SCOPE_HEADER = 'x-hanactl-connection-scope';
