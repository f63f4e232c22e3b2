import { parse } from 'dotenv';

/**
 * A `.env` file's variables, parsed by the `dotenv` package itself: hana-cli loads `.env` with
 * dotenv, so its reading (comments, quotes, `export`, `KEY: value`, what an unterminated quote
 * means) is the contract, edge cases included. Lines it cannot read are skipped, as dotenv does.
 */
export function parseDotenv(text: string): ReadonlyMap<string, string> {
  return new Map(Object.entries(parse(text)));
}
