/**
 * One generic function plays a whole game of any variant against the service, turn by turn
 * (`games/turn`, following `moves/suggest`), records it as the answers give them (the dice
 * kept as the keep names them; in Bozó the next throw announced em baixo when the keep says
 * so), then has the recorded game checked (`games/validate`) and analysed
 * (`games/analyze`), and compares the totals.
 */
import {
  analyzeGame, playTurn, suggestMove, validateGame, variantDefinition,
  type MoveSuggestion, type RecordedTurn, type Scorecard, type ServiceClient, type TurnRequest, type Variant,
} from "./api.js";

/** One player's analysis: skill + luck against the difference it should add up to. */
export interface AnalysedPlayer {
  skill: number;
  luck: number;
  difference: number;
  decisions: number;
}

/** What a played game came to, as the service told it turn by turn and on validation. */
export interface PlayedGame<V extends Variant> {
  variant: V;
  players: number;
  /** turns played, all players together */
  turns: number;
  /** turns that ended on a throw read em baixo (Bozó) */
  emBaixoTurns: number;
  /** keeps that announced the next throw em baixo (Bozó) */
  emBaixoKeeps: number;
  /** each player's total after their last turn (games/turn) */
  totals: number[];
  /** each player's total replayed by games/validate */
  validatedTotals: number[];
  valid: boolean;
  winners: number[];
  endedBy: string | null;
  /** a player won at once (an instant win such as Generala servida) */
  instantWin: boolean;
  /** games/analyze of the recorded game, per player */
  analysis: AnalysedPlayer[];
}

export class GameMismatch extends Error {}

/** Skill plus luck is the difference between the final and the expected final score, to the
 * rounding of the answer's six decimals. */
const ADDS_UP = 1e-5;

/** Dice that are the same on every run with the same seed (mulberry32). */
export function seededDice(seed: number): (count: number) => number[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (count) => Array.from({ length: count }, () => 1 + Math.floor(next() * 6));
}

/** Play a whole game of `variant` for `players` players, each following the advisor's best
 * move, then validate and analyse the recorded game and check it agrees with what each turn
 * answered. */
export async function playGame<V extends Variant>(
  client: ServiceClient, variant: V, players = 2, seed = 1): Promise<PlayedGame<V>> {
  const definition = await variantDefinition(client, variant);
  const roll = seededDice(seed);
  const sheets: (Scorecard | undefined)[] = Array.from({ length: players }, () => undefined);
  const recorded: RecordedTurn[][] = Array.from({ length: players }, () => []);
  const totals: number[] = Array.from({ length: players }, () => 0);
  const finished: boolean[] = Array.from({ length: players }, () => false);
  let turns = 0;
  let emBaixoTurns = 0;
  let emBaixoKeeps = 0;
  let instantWin = false;

  while (!instantWin && finished.includes(false)) {
    for (let player = 0; player < players && !instantWin; player++) {
      if (finished[player]) continue;
      const scorecard = sheets[player];
      let dice = roll(definition.dice);
      let throwNo = 1;
      // how this throw is read: em baixo (Bozó) only when the keep before it announced it
      let emBaixo = false;
      const throws: number[][] = [dice];
      const kept: number[][] = [];
      let turn: TurnRequest;
      for (;;) {
        const advice: MoveSuggestion = await suggestMove(client, variant,
          { scorecard, dice, throw: throwNo, em_baixo: emBaixo });
        const best = advice.best;
        if (best.action === "keep") {
          // the dice to keep as thrown: recorded as they come, kept on the table
          kept.push(best.dice);
          dice = [...best.dice, ...roll(definition.dice - best.dice.length)];
          throws.push(dice);
          throwNo += 1;
          emBaixo = best.em_baixo;
          if (emBaixo) emBaixoKeeps += 1;
          continue;
        }
        turn = { scorecard, dice, throw: throwNo, box: best.box, column: best.column ?? null,
                 em_baixo: emBaixo };
        break;
      }
      const played = await playTurn(client, variant, turn);
      turns += 1;
      if (emBaixo) emBaixoTurns += 1;
      recorded[player]?.push({ throws, kept, box: turn.box ?? null, column: turn.column ?? null,
                               em_baixo: emBaixo });
      sheets[player] = played.scorecard;
      totals[player] = played.totals.total;
      finished[player] = played.game_over;
      instantWin = played.won;
    }
  }

  const game = {
    players: recorded.map((turnsOf, i) => ({ name: `player ${i + 1}`, turns: turnsOf,
                                             total: totals[i] ?? 0 })),
  };
  const validation = await validateGame(client, variant, game);
  const validatedTotals = validation.players.map((p) => p.total);
  const problems = validation.problems.map((p) => `${p.pointer} ${p.code}: ${p.detail}`);
  if (!validation.valid || problems.length > 0 || !validation.game_over) {
    throw new GameMismatch(`${variant}: the recorded game is not a valid finished game: `
      + `valid ${validation.valid}, game over ${validation.game_over}, ${problems.join("; ")}`);
  }
  if (validatedTotals.join() !== totals.join()) {
    throw new GameMismatch(`${variant}: games/validate totals ${validatedTotals} differ from `
      + `games/turn totals ${totals}`);
  }
  const analysed = await analyzeGame(client, variant, game);
  const analysis = analysed.players.map((p) => ({ skill: p.skill, luck: p.luck,
                                                  difference: p.difference,
                                                  decisions: p.decisions }));
  for (const [i, p] of analysis.entries()) {
    if (Math.abs(p.skill + p.luck - p.difference) > ADDS_UP) {
      throw new GameMismatch(`${variant}: player ${i + 1}'s skill ${p.skill} + luck ${p.luck} `
        + `is not the difference ${p.difference}`);
    }
  }
  return { variant, players, turns, emBaixoTurns, emBaixoKeeps, totals, validatedTotals,
           valid: validation.valid, winners: validation.winners, endedBy: validation.ended_by,
           instantWin, analysis };
}
