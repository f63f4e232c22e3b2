/** Longest SQL text run_query takes, in characters. Here, free of zod, so the relay can name it. */
export const MAX_SQL_LENGTH = 1_000_000;

/** Most parameter values one statement takes. */
export const MAX_PARAMS = 1000;
