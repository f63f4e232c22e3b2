/** Every request to the daemon carries this header; requests without it are refused with 403. */
export const CLIENT_HEADER = 'x-hanactl-client';
