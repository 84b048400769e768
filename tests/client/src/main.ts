/**
 * node dist/src/main.js BASE_URL [VARIANT ...]: play a two-player game of each variant
 * (default: every variant of `GET /v1/variants`) against the service at BASE_URL with
 * playGame, and print one JSON line per game. Exit status 1 on the first game that fails.
 *
 * YAHTZEE_API_KEY, when set, is the tenant's API key: sent on every request as
 * `Authorization: Bearer <key>` (a server run with AUTH=keys answers 401 without it).
 */
import createClient from "openapi-fetch";
import type { paths } from "../generated/openapi.js";
import { listVariants, type Variant } from "./api.js";
import { playGame } from "./play.js";

async function main(): Promise<void> {
  const [baseUrl, ...asked] = process.argv.slice(2);
  if (baseUrl === undefined) throw new Error("usage: main.js BASE_URL [VARIANT ...]");
  const key = process.env["YAHTZEE_API_KEY"];
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  const client = createClient<paths>({ baseUrl, headers });
  // the catalogue's ids are the spec's variant enum: each one a Variant, no cast
  const served: Variant[] = (await listVariants(client)).map((v) => v.id);
  const variants = asked.length > 0 ? asked : served;
  for (const [i, id] of variants.entries()) {
    const variant = served.find((v) => v === id);
    if (variant === undefined) throw new Error(`not a variant the service serves: ${id}`);
    const game = await playGame(client, variant, 2, 1000 + i);
    console.log(JSON.stringify(game));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
