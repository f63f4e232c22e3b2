/** Thrown by a command to end with a given exit code; the one top-level catch prints and exits. */
export class CliExit extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = '') {
    super(message);
    this.name = 'CliExit';
    this.exitCode = exitCode;
  }
}

/** Documented exit codes: 0 ok, 1 failure, 2 usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
