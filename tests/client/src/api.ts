/**
 * Every call the client makes, one function per operation, typed from the committed spec
 * (generated/openapi.d.ts, made by openapi-typescript from openapi/openapi.json).
 *
 * Each call uses the templated path (`/v1/variants/{variant}/games/turn`, ...), whose
 * schemas are the same for every variant (box ids: the union of all variants' ids), with the
 * variant as a path parameter: so one function generic in the variant type-checks. (The
 * per-variant paths, `/v1/variants/yahtzee/games/turn` with `TurnRequest_yahtzee`, narrow
 * the boxes to the variant's own, but a function generic in the variant cannot name them.)
 */
import type { Client } from "openapi-fetch";
import type { components, paths } from "../generated/openapi.js";

type Schemas = components["schemas"];

/** Every variant the service serves: the enum of the templated paths' `variant`. */
export type Variant =
  paths["/v1/variants/{variant}/games/turn"]["post"]["parameters"]["path"]["variant"];

export type ServiceClient = Client<paths>;
export type VariantDefinition = Schemas["VariantDefinition"];
export type TurnRequest = Schemas["TurnRequest"];
export type TurnResult = Schemas["TurnResult"];
export type Scorecard = TurnResult["scorecard"];
export type MoveRequest = Schemas["MoveSuggestRequest"];
export type MoveSuggestion = Schemas["MoveSuggestion"];
export type Game = Schemas["Game"];
export type GameValidation = Schemas["GameValidation"];
export type GameAnalysis = Schemas["GameAnalysis"];
export type RecordedTurn = Schemas["RecordedTurn"];
export type Problem = Schemas["Problem"];

/** A refusal or an unexpected answer, with the service's problem document when it sent one. */
export class ServiceError extends Error {
  constructor(what: string, readonly status: number, readonly problem: unknown) {
    super(`${what}: HTTP ${status} ${JSON.stringify(problem)}`);
  }
}

const MAX_WAITS = 30;

/** Ask again while the answer is 202 (`TableBuilding`: the advisor's table is being built),
 * waiting Retry-After seconds each time, as the spec says a client should. */
async function waitingOut202<R extends { response: Response }>(ask: () => Promise<R>): Promise<R> {
  for (let waits = 0; ; waits++) {
    const answer = await ask();
    if (answer.response.status !== 202 || waits >= MAX_WAITS) return answer;
    const seconds = Number(answer.response.headers.get("Retry-After")) || 1;
    await new Promise((done) => setTimeout(done, seconds * 1000));
  }
}

/** Every variant the service serves, with its rules (`GET /v1/variants`). */
export async function listVariants(client: ServiceClient): Promise<VariantDefinition[]> {
  const { data, error, response } = await client.GET("/v1/variants");
  if (data === undefined) throw new ServiceError("GET variants", response.status, error);
  return data.variants;
}

export async function variantDefinition<V extends Variant>(
  client: ServiceClient, variant: V): Promise<VariantDefinition> {
  const { data, error, response } = await client.GET("/v1/variants/{variant}",
    { params: { path: { variant } } });
  if (data === undefined) throw new ServiceError(`GET ${variant}`, response.status, error);
  return data;
}

export async function suggestMove<V extends Variant>(
  client: ServiceClient, variant: V, body: MoveRequest): Promise<MoveSuggestion> {
  const { data, error, response } = await waitingOut202(() => client.POST(
    "/v1/variants/{variant}/moves/suggest", { params: { path: { variant } }, body }));
  // a 202 still there after MAX_WAITS: its body is a TableBuilding, not a MoveSuggestion
  if (data === undefined || !("best" in data)) {
    throw new ServiceError(`moves/suggest ${variant}`, response.status, error ?? data);
  }
  return data;
}

export async function playTurn<V extends Variant>(
  client: ServiceClient, variant: V, body: TurnRequest): Promise<TurnResult> {
  const { data, error, response } = await client.POST("/v1/variants/{variant}/games/turn",
    { params: { path: { variant } }, body });
  if (data === undefined) throw new ServiceError(`games/turn ${variant}`, response.status, error);
  return data;
}

export async function validateGame<V extends Variant>(
  client: ServiceClient, variant: V, body: Game): Promise<GameValidation> {
  const { data, error, response } = await client.POST("/v1/variants/{variant}/games/validate",
    { params: { path: { variant } }, body });
  if (data === undefined) {
    throw new ServiceError(`games/validate ${variant}`, response.status, error);
  }
  return data;
}

export async function analyzeGame<V extends Variant>(
  client: ServiceClient, variant: V, body: Game): Promise<GameAnalysis> {
  const { data, error, response } = await waitingOut202(() => client.POST(
    "/v1/variants/{variant}/games/analyze", { params: { path: { variant } }, body }));
  if (data === undefined || !("players" in data)) {
    throw new ServiceError(`games/analyze ${variant}`, response.status, error ?? data);
  }
  return data;
}
