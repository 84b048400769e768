/**
 * Every call the client makes, one function per operation, typed from the committed spec
 * (generated/openapi.d.ts, made by openapi-typescript from openapi/openapi.json).
 *
 * The spec serves each variant at its own paths (`/v1/variants/yahtzee/games/turn`, ...) with
 * its own schemas (`TurnRequest_yahtzee`, ...). A function generic in the variant cannot
 * name one of those paths: `/v1/variants/${V}/games/turn` is not a key of `paths` for an
 * unknown `V`. So each call below widens the variant to the union `Variant` (widening, not a
 * cast): the path is then the union of the per-variant paths, and the body and answer the
 * union of the per-variant schemas. When the spec has the templated paths
 * (`/v1/variants/{variant}/...`, with generic schemas), each call is one line to change:
 * the `client.POST(...)` line, to the templated path with `params: { path: { variant } }`,
 * and the type aliases below, to the generic schemas.
 */
import type { Client } from "openapi-fetch";
import type { components, paths } from "../generated/openapi.js";

type Schemas = components["schemas"];

/**
 * The variants this client plays. With the per-variant paths a call generic in the variant
 * type-checks only through the union of the variants' schemas (above), which loses which
 * scorecard belongs to which variant: a scorecard of any variant in the union must fit the
 * request of every variant. GENERALA's and YAHTZEE's do; with all of the spec's variants
 * (`Schemas["MoveSuggestion"]["variant"]`) it fails (Yacht's sheet allows only 0 in
 * `five_of_a_kind_bonuses`). The templated paths lift this: the union becomes the spec's.
 */
export type Variant = "generala" | "yahtzee";

/**
 * A request as this client sends it: the variant's own rules, no house rules. (openapi-fetch
 * 0.17's `Writable` turns a property whose schema allows only null, such as
 * `rules.five_of_a_kind_bonus` of a variant without that bonus, into `never`, so a body typed
 * with `rules` from the same spec would not type-check; this client never sends `rules`.)
 */
type WithoutHouseRules<T> = T extends object ? Omit<T, "rules"> : never;

export type ServiceClient = Client<paths>;
export type VariantDefinition = Schemas["VariantDefinition"];
export type TurnRequest = WithoutHouseRules<Schemas[`TurnRequest_${Variant}`]>;
export type TurnResult = Schemas[`TurnResult_${Variant}`];
export type Scorecard = TurnResult["scorecard"];
export type MoveRequest = WithoutHouseRules<Schemas[`MoveSuggestRequest_${Variant}`]>;
export type MoveSuggestion = Schemas["MoveSuggestion"];
export type Game = WithoutHouseRules<Schemas[`Game_${Variant}`]>;
export type GameValidation = Schemas[`GameValidation_${Variant}`];
export type RecordedTurn = Schemas["RecordedTurn"];
export type Problem = Schemas["Problem"];

/** A refusal or an unexpected answer, with the service's problem document when it sent one. */
export class ServiceError extends Error {
  constructor(what: string, readonly status: number, readonly problem: unknown) {
    super(`${what}: HTTP ${status} ${JSON.stringify(problem)}`);
  }
}

/** The single answer of an operation that also takes a batch (today's `T | T[]` under one
 * 200; once single and batch are separate operations this is the answer as it comes). */
function one<T extends object>(what: string, data: T | T[] | undefined, status: number): T {
  if (data === undefined || Array.isArray(data)) {
    throw new ServiceError(`${what}: not a single answer`, status, data);
  }
  return data;
}

const MAX_WAITS = 30;

/** Ask again while the answer is 202 (the advisor's table is being built), waiting
 * Retry-After seconds each time, as the spec says a client should. */
async function waitingOut202<R extends { response: Response }>(ask: () => Promise<R>): Promise<R> {
  for (let waits = 0; ; waits++) {
    const answer = await ask();
    if (answer.response.status !== 202 || waits >= MAX_WAITS) return answer;
    const seconds = Number(answer.response.headers.get("Retry-After")) || 1;
    await new Promise((done) => setTimeout(done, seconds * 1000));
  }
}

export async function variantDefinition<V extends Variant>(
  client: ServiceClient, variant: V): Promise<VariantDefinition> {
  const v: Variant = variant;
  const { data, error, response } = await client.GET(`/v1/variants/${v}`);
  if (data === undefined) throw new ServiceError(`GET ${v}`, response.status, error);
  return data;
}

export async function suggestMove<V extends Variant>(
  client: ServiceClient, variant: V, body: MoveRequest): Promise<MoveSuggestion> {
  const v: Variant = variant;
  const { data, error, response } = await waitingOut202(
    () => client.POST(`/v1/variants/${v}/moves/suggest`, { body }));
  if (response.status !== 200 || data === undefined || !("best" in data)) {
    throw new ServiceError(`moves/suggest ${v}`, response.status, error ?? data);
  }
  return data;
}

export async function playTurn<V extends Variant>(
  client: ServiceClient, variant: V, body: TurnRequest): Promise<TurnResult> {
  const v: Variant = variant;
  const { data, error, response } = await client.POST(`/v1/variants/${v}/games/turn`, { body });
  if (error !== undefined) throw new ServiceError(`games/turn ${v}`, response.status, error);
  return one(`games/turn ${v}`, data, response.status);
}

export async function validateGame<V extends Variant>(
  client: ServiceClient, variant: V, body: Game): Promise<GameValidation> {
  const v: Variant = variant;
  const { data, error, response } = await client.POST(`/v1/variants/${v}/games/validate`,
    { body });
  if (error !== undefined) throw new ServiceError(`games/validate ${v}`, response.status, error);
  return one(`games/validate ${v}`, data, response.status);
}
