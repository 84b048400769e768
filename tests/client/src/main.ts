/**
 * node dist/src/main.js BASE_URL [VARIANT ...]: play a two-player game of each variant
 * (default generala and yahtzee) against the service at BASE_URL with playGame, and print one
 * JSON line per game. Exit status 1 on the first game that fails.
 *
 * YAHTZEE_API_KEY, when set, is the tenant's API key: sent on every request as
 * `Authorization: Bearer <key>` (a server run with AUTH=keys answers 401 without it).
 */
import createClient from "openapi-fetch";
import type { paths } from "../generated/openapi.js";
import { type Variant } from "./api.js";
import { playGame } from "./play.js";

const VARIANTS = ["generala", "yahtzee"] as const satisfies readonly Variant[];

function isVariant(id: string): id is Variant {
  const known: readonly string[] = VARIANTS;
  return known.includes(id);
}

async function main(): Promise<void> {
  const [baseUrl, ...asked] = process.argv.slice(2);
  if (baseUrl === undefined) throw new Error("usage: main.js BASE_URL [VARIANT ...]");
  const variants = asked.length > 0 ? asked : [...VARIANTS];
  const key = process.env["YAHTZEE_API_KEY"];
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  const client = createClient<paths>({ baseUrl, headers });
  for (const [i, id] of variants.entries()) {
    if (!isVariant(id)) throw new Error(`not a variant this client plays: ${id}`);
    const game = await playGame(client, id, 2, 1000 + i);
    console.log(JSON.stringify(game));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
