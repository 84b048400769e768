// The playground: a whole game played in the browser through the service's public API only
// (GET /v1/variants, POST rules, hands/score, moves/suggest, games/turn, and scorecards/score
// for a new sheet's totals and a column sheet's totals of each column), against up to three
// computers (moves/bot), with each player's chance to win (games/win-probability) and your
// final score's distribution (positions/value) drawn after every round. No build step, no
// library, nothing from another host: the charts are the page's own SVG.
//
// Every word a person reads is in six languages: the page's own in words.json, the names of
// the variants, boxes, options and option values from the variant catalogue; every figure is
// written as the page's language writes numbers (Intl.NumberFormat).
//
// The game is recorded as games/validate takes it (`state.record`: the dice of each throw as
// thrown, the dice kept, the box, and em baixo for Bozó), the kept dice as the advice names
// them. Every asynchronous step belongs to one game (`state.game`): an answer that comes back
// after a new game started is dropped, so nothing of an old game reaches the new one.
"use strict";

const LANGS = ["en", "pt", "es", "de", "sv", "fr"];

// Every word the page itself shows, by language (words.json beside this script, read once
// before anything is drawn).
const WORDS_URL = new URL("words.json", document.currentScript.src);
let UI = { en: {} };

const LEVELS = ["beginner", "casual", "strong", "expert"];
const MAX_BOTS = 3;
const PARAMS = new URLSearchParams(location.search);
// Milliseconds between a computer's moves, so that its turn can be watched (?pause=0 in
// tests).
const PAUSE = Number(PARAMS.get("pause") ?? 700);
// ?seed=N: the dice of a seeded generator (mulberry32), the same game on every visit.
const rng = PARAMS.has("seed") ? seeded(Number(PARAMS.get("seed"))) : Math.random;
const LANG_STORE = "yahtzee-playground-lang";
// Histogram bars at most, and the share of the distribution each tail may fold into the
// first or the last bar, so that the bars follow the range where the scores are.
const MAX_BINS = 40;
const TAIL = 0.001;

const $ = (id) => document.getElementById(id);
const state = {
  variants: [], def: null, lang: "en", options: {}, scorecard: null, totals: null,
  dice: [], kept: [], throw: 0, turn: 1, emBaixo: false, over: false, result: null,
  bots: [], busy: false, moving: null, you: { last: null },
  hand: null, advice: null, value: null, chances: null,
  record: [], turnThrows: [], turnKept: [], typed: false,
  game: 0, position: 0, pending: false, statusText: null, startedWith: null,
  starts: 0,
};

function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const die = () => 1 + Math.floor(rng() * 6);

function t(key, vars) {
  let text = (UI[state.lang] || UI.en)[key] ?? UI.en[key] ?? key;
  for (const [k, v] of Object.entries(vars || {})) text = text.replaceAll(`{${k}}`, v);
  return text;
}

/** The text of a catalogue label object ({en, pt, ...}) in the page's language. */
function pick(labels) {
  return (labels && (labels[state.lang] || labels.en)) || "";
}

function boxLabel(boxId) {
  const box = state.def && state.def.boxes.find((b) => b.id === boxId);
  return box ? pick(box.labels) : boxId;
}

function boxName(boxId, column) {
  return `${boxLabel(boxId)}${column ? ` (${t("column", { n: column })})` : ""}`;
}

const sorted = (dice) => [...dice].sort((a, b) => a - b);

// Every figure the page shows (scores, totals, expected scores, regrets, means, shares) is
// written as the page's language writes numbers: 245.32 in English, 245,32 in German, 12,5 %
// in French. One Intl.NumberFormat per language and kind of figure, made on first use.
const NUMBER_KINDS = {
  int: { maximumFractionDigits: 0 },
  1: { minimumFractionDigits: 1, maximumFractionDigits: 1 },
  2: { minimumFractionDigits: 2, maximumFractionDigits: 2 },
  pct: { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 },
};
const FORMATS = new Map();

function formatter(kind) {
  const key = `${state.lang}|${kind}`;
  if (!FORMATS.has(key)) FORMATS.set(key, new Intl.NumberFormat(state.lang, NUMBER_KINDS[kind]));
  return FORMATS.get(key);
}

/** A number as the page's language writes it, with `digits` decimals (0: a whole number). */
const num = (x, digits = 0) => formatter(digits ? digits : "int").format(x);
/** A share (0..1) as a percentage with one decimal, as the page's language writes it. */
const pct = (p) => formatter("pct").format(p);

function el(name, attrs = {}, text) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "scope"
             || k === "id" || k === "for" || k === "tabindex") node.setAttribute(k, v);
    else node[k] = v;
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Re-render part of the page and give focus back to the element that had it (by its
 * test id), so that a keyboard user keeps their place. */
function keepingFocus(host, render) {
  const active = document.activeElement;
  const id = active && host.contains(active) ? active.dataset.testid : null;
  render();
  if (id) {
    const again = host.querySelector(`[data-testid="${id}"]`);
    if (again && !again.disabled) again.focus();
  }
}

// ------------------------------------------------------------------------------ the API

// A server run with AUTH=keys wants a tenant's API key on every /v1/ request: the one typed
// in the API key field (kept for this tab only), sent as `Authorization: Bearer <key>`.
const KEY_STORE = "yahtzee-api-key";

function apiKey() {
  return sessionStorage.getItem(KEY_STORE) || "";
}

async function api(method, path, body) {
  // 202: the advisor's table of these rules is being built; the same request, asked again
  // after Retry-After seconds, gets the answer (a few tries, then the detail is shown).
  // 429 with a short Retry-After: this page's other requests hold its fair share of the
  // server (/problems/too-many-in-flight); asked again, it gets its turn. A quota spent for
  // longer than a few seconds is shown as it is.
  for (let attempt = 0; ; attempt++) {
    const headers = body ? { "Content-Type": "application/json" } : {};
    if (apiKey()) headers.Authorization = `Bearer ${apiKey()}`;
    const res = await fetch(path, {
      method, headers, body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (res.status === 401) throw new Error(`${t("needKey")} (${data.detail})`);
    const wait = Number(res.headers.get("Retry-After")) || data.retry_after || 1;
    if ((res.status === 202 || (res.status === 429 && wait <= 5)) && attempt < 20) {
      await new Promise((done) => setTimeout(done, wait * 1000));
      continue;
    }
    if (!res.ok || res.status === 202) throw new Error(data.detail || `${res.status}`);
    return data;
  }
}

/** A request a step of `game` waits for while the page is busy: its answer; or null when a
 * new game started meanwhile, or when it failed (its error shown, the page no longer busy). */
async function gameStep(game, method, path, body) {
  try {
    const data = await api(method, path, body);
    return game === state.game ? data : null;
  } catch (err) {
    if (game === state.game) {
      message(err.message);
      state.busy = false;
      render();
    }
    return null;
  }
}

const base = () => `/v1/variants/${state.def.id}`;

/** What every request about your position says: the rules, your sheet, and (Bozó) that the
 * dice were read em baixo. */
function position() {
  const body = { options: state.options, scorecard: state.scorecard, dice: state.dice,
                 throw: state.throw };
  if (state.emBaixo) body.em_baixo = true;
  return body;
}

function emptyScorecard(def) {
  const column = () => ({
    boxes: Object.fromEntries(def.boxes.map((b) => [b.id, null])),
    five_of_a_kind_bonuses: 0,
  });
  const card = def.columns.length ? { columns: def.columns.map(column) } : column();
  card.saved_throws = 0;
  card.won = false;
  return card;
}

function maxThrow() {
  return state.def.throws + (state.def.saved_throws ? state.scorecard.saved_throws : 0);
}

// ------------------------------------------------------------------------------ settings

async function loadVariants() {
  state.variants = (await api("GET", "/v1/variants")).variants;
}

function selectedVariant() {
  return state.variants.find((v) => v.id === $("variant").value) || state.variants[0];
}

function renderVariantChoices() {
  const select = $("variant");
  const value = select.value || (state.def && state.def.id) || "yahtzee";
  select.innerHTML = "";
  for (const v of state.variants) select.add(new Option(pick(v.labels), v.id));
  select.value = value;
}

function renderOptions(values) {
  const variant = selectedVariant();
  const host = $("options");
  for (const node of [...host.children]) if (node.tagName !== "LEGEND") node.remove();
  if (!variant.options.length) {
    host.append(el("p", { class: "help" }, t("noOptions")));
    return;
  }
  for (const opt of variant.options) {
    const id = `option-${opt.name}`;
    const help = el("p", { class: "help", id: `${id}-help` }, pick(opt.descriptions));
    const wrap = el("div", { class: "option" });
    const value = values && opt.name in values ? values[opt.name] : opt.default;
    let input;
    if (opt.choices.length === 2 && opt.choices.includes(true)) {
      input = el("input", { type: "checkbox", id, "data-testid": id, checked: value === true });
      const label = el("label", { for: id });
      label.append(input, ` ${pick(opt.labels)}`);
      wrap.append(label);
    } else {
      input = el("select", { id, "data-testid": id });
      opt.choices.forEach((c, i) => input.add(new Option(pick(opt.choice_labels[i]), String(c))));
      input.value = String(value);
      wrap.append(el("label", { for: id }, pick(opt.labels)), " ", input);
    }
    input.dataset.option = opt.name;
    input.setAttribute("aria-describedby", help.id);
    wrap.append(help);
    host.append(wrap);
  }
}

function readOptions() {
  const options = {};
  for (const input of $("options").querySelectorAll("[data-option]")) {
    options[input.dataset.option] = input.type === "checkbox" ? input.checked : input.value;
  }
  return options;
}

function readBots() {
  return [...$("bots").querySelectorAll("select")].map((s) => s.value).filter(Boolean);
}

function renderBotChoices() {
  const host = $("bots");
  const chosen = [...host.querySelectorAll("select")].map((s) => s.value);
  for (const node of [...host.children]) if (node.tagName !== "LEGEND") node.remove();
  for (let i = 0; i < MAX_BOTS; i++) {
    const id = `bot-${i + 1}`;
    const select = el("select", { id, "data-testid": id });
    select.add(new Option(t("noBot"), ""));
    for (const level of LEVELS) select.add(new Option(t(level), level));
    select.value = chosen[i] || "";
    host.append(el("label", { for: id }, t("computer", { n: i + 1 })), " ", select, " ");
  }
}

/** A game has started once a die was thrown or a box written; a change of the rules or the
 * players then waits for the next game (the page says so) instead of discarding this one. */
function started() {
  return state.throw > 0 || state.record.length > 0 || state.turn > 1 || state.over
    || state.bots.some((b) => b.moved);
}

let settingsTimer = null;

function settingsChanged() {
  if (started()) {
    state.pending = true;
    renderPending();
    return;
  }
  // nothing played yet: the new settings start a new game, once the keyboard has stopped
  // moving through a select (each arrow key is a change)
  clearTimeout(settingsTimer);
  settingsTimer = setTimeout(() => newGame(), 300);
}

function renderPending() {
  $("pending").textContent = state.pending ? t("pending") : "";
  $("new-game").classList.toggle("attention", state.pending);
  // the game being played, in the settings' summary (closed, it is all they show)
  const variant = state.def && state.variants.find((v) => v.id === state.def.id);
  $("settings-now").textContent = variant
    ? `: ${pick(variant.labels)}${state.bots.length
      ? ` · ${t("opponents")}: ${state.bots.length}` : ""}` : "";
}

function askNewGame() {
  if (!started() || state.over) {
    newGame({ focusRoll: true });
    return;
  }
  $("confirm").showModal();
  $("confirm-no").focus();
}

// ------------------------------------------------------------------------------ a game

/** A new game with the settings chosen. `focusRoll` (a new game the player asked for): once it
 * can be played, the focus goes to Roll, unless the player has moved it meanwhile. */
async function newGame({ focusRoll = false } = {}) {
  clearTimeout(settingsTimer);
  const game = ++state.game;
  const from = document.activeElement;
  const options = readOptions();
  const id = $("variant").value;
  const levels = readBots();
  clearCharts();  // nothing of the last game's charts stays while this one starts
  state.busy = true;
  state.pending = false;
  renderPending();
  render();
  const answer = await gameStep(game, "POST", `/v1/variants/${id}/rules`, { options });
  if (!answer) return;
  const def = answer.definition;
  Object.assign(state, {
    def, options, scorecard: emptyScorecard(def), totals: null, turn: 1, over: false,
    result: null, record: [], you: { last: null }, value: null, chances: null,
    moving: null, statusText: null,
  });
  state.bots = levels.map((level, i) => ({
    n: i + 1, level, scorecard: emptyScorecard(def), total: 0, last: null, now: null,
    moved: false, seed: Math.floor(rng() * 2 ** 31),
  }));
  message("");
  status(null);
  renderPending();
  startTurn();
  drawCharts();  // nothing stale: the old game's charts go at once
  try {
    await refreshTotals(game);
  } catch (err) {
    if (game === state.game) message(err.message);
  }
  if (game !== state.game) return;
  state.busy = false;
  render();
  renderPlayers();
  const focus = document.activeElement;
  if (focusRoll && (focus === from || !focus || focus === document.body)) $("roll").focus();
  await refreshCharts(game);
}

function startTurn() {
  state.dice = Array(state.def.dice).fill(null);
  state.kept = Array(state.def.dice).fill(false);
  state.throw = 0;
  state.emBaixo = false;
  $("em-baixo").checked = false;  // an announcement is for one throw of one turn
  state.turnThrows = [];
  state.turnKept = [];
  state.typed = false;
  state.hand = null;
  state.advice = null;
  renderAll();
}

/** A turn's totals (games/turn's, of the whole sheet), and on a column sheet each column's
 * too, from scorecards/score of the sheet the turn answered; without them (their request
 * failed: the error is shown) the sheet shows the grand total only. */
async function withColumnTotals(game, played) {
  if (!state.def.columns.length) return played.totals;
  try {
    const scored = await api("POST", `${base()}/scorecards/score`,
                             { ...played.scorecard, options: state.options });
    return { ...played.totals, columns: scored.columns };
  } catch (err) {
    if (game === state.game) message(err.message);
    return played.totals;
  }
}

async function refreshTotals(game) {
  const body = { ...state.scorecard, options: state.options };
  const totals = await api("POST", `${base()}/scorecards/score`, body);
  if (game === state.game) state.totals = totals;
  renderSheet();
}

// ------------------------------------------------------------------------------ a turn

function message(text) {
  $("message").textContent = text;
}

/** The status line (a polite live region): what just happened, in the page's language. */
function status(text) {
  state.statusText = text;
  $("status").textContent = text ? text() : "";
}

/** The next throw is announced em baixo (Bozó): the box ticked. */
function announced() {
  return Boolean(state.def && state.def.em_baixo && $("em-baixo").checked);
}

function canRoll() {
  return Boolean(state.def) && !state.over && !state.busy && state.throw < maxThrow()
    && !(state.throw > 0 && state.kept.every(Boolean));
}

async function roll() {
  if (!canRoll()) return;
  const first = state.throw === 0;
  if (!first) state.turnKept.push(sorted(state.dice.filter((_, i) => state.kept[i])));
  state.dice = state.dice.map((d, i) => (!first && state.kept[i] ? d : die()));
  state.throw += 1;
  state.emBaixo = announced();
  state.turnThrows.push([...state.dice]);
  const shown = state.dice.join(" ");
  const n = state.throw;
  status(() => t("rolled", { throw: n, dice: shown }));
  await afterDice();
}

async function setDice() {
  if (!state.def || state.over || state.busy) return;
  const faces = $("typed").value.trim().split(/[\s,]+/).map(Number);
  if (faces.length !== state.def.dice || faces.some((f) => !(f >= 1 && f <= 6))) {
    message(`${state.def.dice} × 1-6`);
    return;
  }
  // typed dice replace the throw: the turn's kept dice are then not recorded
  state.typed = true;
  state.dice = faces;
  state.kept.fill(false);
  if (state.throw < maxThrow()) {
    state.throw += 1;
    state.turnThrows.push([...faces]);
  } else {
    state.turnThrows[state.turnThrows.length - 1] = [...faces];
  }
  state.emBaixo = announced();
  const n = state.throw;
  status(() => t("rolled", { throw: n, dice: faces.join(" ") }));
  await afterDice();
}

async function afterDice() {
  const game = state.game;
  const at = ++state.position;
  message("");
  state.hand = null;
  state.advice = null;
  renderAll();
  try {
    const [hand, advice] = await Promise.all([
      api("POST", `${base()}/hands/score`, position()),
      api("POST", `${base()}/moves/suggest`, position()),
    ]);
    if (game !== state.game || at !== state.position) return;
    state.hand = hand;
    state.advice = advice;
  } catch (err) {
    if (game === state.game) message(err.message);
    return;
  }
  renderSheet();
  renderAdvice();
  render();
  revealBest();
  // the last throw: the Roll button is done, the boxes are next
  if (!canRoll() && (document.activeElement === document.body
                     || document.activeElement === $("roll"))) {
    const next = $("best-move") || document.querySelector("#sheet button.write");
    if (next) next.focus();
  }
}

function toggleKeep(i) {
  if (state.throw === 0 || state.throw >= maxThrow() || state.busy || state.over) return;
  state.kept[i] = !state.kept[i];
  updateDie(i);
  render();
}

/** Keep the dice a keep move names, as thrown, and announce (or not) the next throw em
 * baixo as it says. */
function applyKeep(move) {
  const want = [...move.dice];
  state.kept = state.dice.map((d) => {
    const at = want.indexOf(d);
    if (at < 0) return false;
    want.splice(at, 1);
    return true;
  });
  if (state.def.em_baixo) $("em-baixo").checked = move.em_baixo;
  renderDice();
  render();
  $("roll").focus();
}

async function write(box, column) {
  if (state.busy || state.over || state.throw === 0) return;
  const game = state.game;
  // the service plays the turn (games/turn): it writes the box, counts a five-of-a-kind
  // bonus, saves unused throws (Maxi Yatzy), marks a won game, and answers the scorecard to
  // send next time with its totals; the page keeps no score of its own
  const body = { ...position(), box };
  if (column) body.column = column;
  state.busy = true;
  render();
  const played = await gameStep(game, "POST", `${base()}/games/turn`, body);
  if (!played) return;
  const totals = await withColumnTotals(game, played);
  if (game !== state.game) return;
  const turn = { throws: state.turnThrows, box };
  if (!state.typed) turn.kept = state.turnKept;
  if (column) turn.column = column;
  if (state.emBaixo) turn.em_baixo = true;
  state.record.push(turn);
  state.scorecard = played.scorecard;
  state.totals = totals;
  const score = played.earned.score;
  state.you.last = { box, column, score, emBaixo: state.emBaixo };
  const total = played.totals.total;
  status(() => t("youWrote", { box: boxName(box, column), score: num(score),
                                total: num(total) }));
  state.hand = null;
  state.advice = null;
  state.dice = Array(state.def.dice).fill(null);
  state.kept.fill(false);
  renderAll();
  let winner = played.won ? 0 : -1;  // the player who won at once (0: you)
  if (winner < 0 && state.bots.length) {
    $("turn-heading").focus();  // the Roll button waits for the computers
    try {
      for (const bot of state.bots) {
        const won = await botTurn(bot, game);
        if (game !== state.game) return;
        if (won) {
          winner = bot.n;
          break;
        }
      }
    } catch (err) {
      if (game === state.game) message(err.message);
    }
  }
  if (game !== state.game) return;
  state.busy = false;
  state.moving = null;
  if (played.game_over || winner >= 0) {
    endGame(winner);
    return;
  }
  state.turn = played.turn + 1;
  startTurn();
  $("roll").focus();
  await refreshCharts(game);
}

// ------------------------------------------------------------------------------ computers

const pause = () => new Promise((done) => setTimeout(done, PAUSE));

/** Which dice of `dice` (as thrown) a keep names. */
function keepMask(dice, keep) {
  const want = [...keep];
  return dice.map((d) => {
    const at = want.indexOf(d);
    if (at < 0) return false;
    want.splice(at, 1);
    return true;
  });
}

// One computer's turn, through moves/bot (its move at its level) and games/turn (the
// service writes it, as it writes yours): shown move by move. True when it won at once.
async function botTurn(bot, game) {
  let dice = Array.from({ length: state.def.dice }, die);
  let throwNo = 1;
  let emBaixo = false;
  bot.moved = true;
  state.moving = bot;
  for (;;) {
    bot.now = { dice: [...dice], emBaixo, keep: null };
    renderPlayers();
    await pause();
    if (game !== state.game) return false;
    const body = { options: state.options, scorecard: bot.scorecard, dice, throw: throwNo,
                   level: bot.level, seed: bot.seed };
    if (emBaixo) body.em_baixo = true;
    const answer = await api("POST", `${base()}/moves/bot`, body);
    if (game !== state.game) return false;
    const move = answer.move;
    if (move.action === "keep" && answer.throws_left > 0) {
      // the dice to keep as thrown; the next throw read em baixo when the move says so
      bot.now.keep = { dice: move.dice, emBaixo: move.em_baixo };
      renderPlayers();
      await pause();
      if (game !== state.game) return false;
      const kept = keepMask(dice, move.dice);
      dice = dice.map((d, i) => (kept[i] ? d : die()));
      throwNo += 1;
      emBaixo = move.em_baixo;
      continue;
    }
    const turn = { options: state.options, scorecard: bot.scorecard, dice, throw: throwNo,
                   box: move.box };
    if (move.column) turn.column = move.column;
    if (emBaixo) turn.em_baixo = true;
    const played = await api("POST", `${base()}/games/turn`, turn);
    if (game !== state.game) return false;
    bot.scorecard = played.scorecard;
    bot.total = played.totals.total;
    bot.last = { box: move.box, column: move.column, score: played.earned.score, emBaixo };
    bot.now = null;
    const total = bot.total;
    status(() => t("botWrote", { name: t("computer", { n: bot.n }),
                                 box: boxName(move.box, move.column),
                                 score: num(bot.last.score), total: num(total) }));
    renderPlayers();
    await pause();
    return played.won;
  }
}

function endGame(winner) {
  state.over = true;
  state.busy = false;
  state.moving = null;
  const totals = [state.totals.total, ...state.bots.map((b) => b.total)];
  const top = Math.max(...totals);
  state.result = {
    winner,  // the player who won at once, or -1
    winners: winner >= 0 ? [winner] : totals.flatMap((v, i) => (v === top ? [i] : [])),
    totals,
  };
  renderAll();
  drawCharts();
  $("game-over").focus();
}

function playerName(i) {
  return i === 0 ? t("you") : t("computer", { n: i });
}

function resultText() {
  const r = state.result;
  if (!r) return "";
  const total = num(r.totals[r.winners[0]]);
  if (!state.bots.length) return t(r.winner === 0 ? "won" : "gameOver", { total });
  if (r.winner === 0) return t("won", { total });
  if (r.winner > 0) return t("wonBy", { name: playerName(r.winner), total });
  if (r.winners.length > 1) {
    return t("tie", { total, names: r.winners.map(playerName).join(", ") });
  }
  return r.winners[0] === 0 ? t("youWin", { total }) : t("winner", { name: playerName(r.winners[0]),
                                                                      total });
}

// ------------------------------------------------------------------------------ drawing

function renderAll() {
  render();
  renderDice();
  renderSheet();
  renderAdvice();
  renderPlayers();
  $("game-over").textContent = resultText();
  $("game-over").dataset.winner = state.result ? String(state.result.winner) : "";
}

function render() {
  const def = state.def;
  $("turn-no").textContent = state.turn;
  $("turn-max").textContent = def ? def.turns : 13;
  $("throw-no").textContent = state.throw;
  $("throw-max").textContent = def ? maxThrow() : 3;
  $("roll").disabled = !canRoll();
  $("set-dice").disabled = !def || state.over || state.busy;
  const emBaixo = Boolean(def && def.em_baixo);
  $("em-baixo-wrap").hidden = !emBaixo;
  $("em-baixo-help").hidden = !emBaixo;
  $("em-baixo").disabled = !emBaixo || state.over || state.busy || state.throw >= maxThrow();
  const readAs = $("read-as");
  readAs.hidden = !state.emBaixo || state.throw === 0;
  readAs.textContent = state.emBaixo
    ? t("readAs", { dice: sorted(state.dice.map((d) => 7 - d)).join(" ") }) : "";
  document.body.dataset.busy = state.busy ? "true" : "false";
}

function dieText(i) {
  const d = state.dice[i];
  if (d === null) return t("dieBlank", { n: i + 1 });
  return t(state.kept[i] ? "dieKept" : "die", { n: i + 1, face: d });
}

function updateDie(i) {
  const b = $("dice").children[i];
  if (!b) return;
  b.classList.toggle("kept", state.kept[i]);
  b.setAttribute("aria-pressed", state.kept[i] ? "true" : "false");
  b.setAttribute("aria-label", dieText(i));
}

function renderDice() {
  keepingFocus($("dice"), () => {
    const host = $("dice");
    host.innerHTML = "";
    state.dice.forEach((d, i) => {
      const b = el("button", { class: `die${d === null ? " blank" : ""}`,
                               "data-testid": `die-${i}` }, d === null ? "?" : String(d));
      b.addEventListener("click", () => toggleKeep(i));
      host.append(b);
      updateDie(i);
    });
  });
}

// ------------------------------------------------------------------------------ in sight

// What the player is about to write stays in sight on a phone, where the turn's panel is
// pinned over the top of the page while the sheet scrolls under it: a box (its row) that
// takes the focus, or that the advice marks best, is scrolled clear of every pinned element.
const CLEARANCE = 8;

/** The band of the window, [top, bottom], that no fixed or sticky element (other than one
 * that holds `target`) covers once pinned. */
function uncovered(target) {
  let top = 0;
  let bottom = window.innerHeight;
  for (const node of document.body.querySelectorAll("*")) {
    if (node.contains(target) || target.contains(node)) continue;
    const style = getComputedStyle(node);
    if (style.position !== "sticky" && style.position !== "fixed") continue;
    const height = node.getBoundingClientRect().height;
    if (!height || style.visibility === "hidden") continue;
    if (style.top !== "auto") top = Math.max(top, parseFloat(style.top) + height);
    else if (style.bottom !== "auto") {
      bottom = Math.min(bottom, window.innerHeight - parseFloat(style.bottom) - height);
    }
  }
  return [top, bottom];
}

/** Scroll the window (at once, only if needed) so that `node`'s table row, or `node`, is
 * whole in the uncovered band. */
function reveal(node) {
  const target = node.closest("tr") || node;
  const [top, bottom] = uncovered(target);
  const r = target.getBoundingClientRect();
  let by = 0;
  if (r.top < top + CLEARANCE) by = r.top - top - CLEARANCE;
  else if (r.bottom > bottom - CLEARANCE) {
    by = Math.min(r.bottom - bottom + CLEARANCE, r.top - top - CLEARANCE);
  }
  if (by) window.scrollBy({ top: by, behavior: "instant" });
}

/** The box the advice marks best, brought into sight. */
function revealBest() {
  const best = document.querySelector("#sheet button.write.best");
  if (best) reveal(best);
}

function placementsByCell() {
  const out = new Map();
  for (const p of (state.hand && state.hand.boxes) || []) out.set(`${p.box}|${p.column || 0}`, p);
  return out;
}

function renderSheet() {
  if (!state.def || !state.scorecard) return;
  keepingFocus($("sheet"), () => {
    const def = state.def;
    const many = def.columns.length > 0;
    const cols = many ? state.scorecard.columns : [state.scorecard];
    const cells = placementsByCell();
    const table = $("sheet");
    table.innerHTML = "";
    table.classList.toggle("columns", many);
    const head = el("tr");
    head.append(el("th", { scope: "col" }, t("box")));
    cols.forEach((_, i) => head.append(el("th", { scope: "col", class: "num" },
                                          many ? t("column", { n: i + 1 }) : t("score"))));
    table.appendChild(el("thead")).append(head);
    const body = table.appendChild(el("tbody"));
    const bestBox = state.advice && state.advice.best.action === "score" ? state.advice.best
      : null;
    for (const box of def.boxes) {
      const tr = el("tr", { "data-testid": `sheet-${box.id}` });
      tr.append(el("th", { scope: "row" }, pick(box.labels)));
      cols.forEach((c, i) => {
        const value = c.boxes[box.id];
        const column = many ? i + 1 : null;
        const td = el("td", { class: "num" });
        const p = cells.get(`${box.id}|${column || 0}`);
        if (value !== null) {
          td.textContent = num(value);
        } else if (p && p.open && p.legal && !state.over && !state.busy) {
          const label = column ? t("writeBoxCol", { box: pick(box.labels), n: column,
                                                     score: num(p.score) })
            : t("writeBox", { box: pick(box.labels), score: num(p.score) });
          const extra = [p.five_of_a_kind_bonus ? `+${num(p.five_of_a_kind_bonus)}` : "",
                         p.joker ? t("joker") : "", p.wins_game ? "★" : ""]
            .filter(Boolean).join(" ");
          // the box shows the figures in short; its name says what each is (the bonus by
          // name, the star in words)
          const named = [p.five_of_a_kind_bonus ? bonusText(p.five_of_a_kind_bonus) : "",
                         p.joker ? t("joker") : "", p.wins_game ? t("winsGame") : ""]
            .filter(Boolean).join(", ");
          const b = el("button", {
            class: `write${bestBox && bestBox.box === box.id
              && (bestBox.column || null) === column ? " best" : ""}`,
            "data-testid": `place-${box.id}${column ? `-${column}` : ""}`,
            "aria-label": `${label}${named ? ` (${named})` : ""}`,
          }, `${num(p.score)}${extra ? ` ${extra}` : ""}`);
          b.dataset.box = box.id;
          if (column) b.dataset.column = column;
          td.append(b);
        } else {
          td.classList.add("open");
        }
        tr.append(td);
      });
      body.append(tr);
    }
    if (many) renderColumnTotals(table);
  });
  renderTotals();
}

/** The totals rows this variant has, as [words, field of the totals, test id]: the upper
 * section and its bonus where there is one, the five-of-a-kind bonus, then the lower section
 * (where there is any row before it). */
function totalRows(def) {
  const rows = [];
  if (def.upper_bonus) {
    rows.push([t("upper"), "upper_subtotal", "upper"]);
    rows.push([t("upperBonus"), "upper_bonus", "upper-bonus"]);
  }
  if (def.five_of_a_kind_bonus) rows.push([t("fiveBonus"), "five_of_a_kind_bonus", "five-bonus"]);
  if (rows.length) rows.push([t("lower"), "lower_total", "lower"]);
  return rows;
}

/** A column sheet's foot: each column's totals under it, as scorecards/score gives them
 * (games/turn answers the whole sheet's only; the page adds up nothing). */
function renderColumnTotals(table) {
  const columns = state.totals && state.totals.columns;
  if (!columns) return;
  const foot = table.appendChild(el("tfoot"));
  const rows = [...totalRows(state.def), [t("columnTotal"), "total", "total"]];
  for (const [name, field, id] of rows) {
    const tr = el("tr", { "data-testid": `sheet-totals-${id}`,
                          class: id === "total" ? "total" : "" });
    tr.append(el("th", { scope: "row" }, name));
    for (const c of columns) {
      tr.append(el("td", { class: "num", "data-testid": `column-${id}-${c.column}` },
                   num(c[field])));
    }
    foot.append(tr);
  }
}

function renderTotals() {
  const tot = state.totals;
  const host = $("totals");
  host.innerHTML = "";
  if (!tot) return;
  const def = state.def;
  const many = def.columns.length > 0;
  const body = host.appendChild(el("tbody"));
  // a column sheet has each column's totals in the sheet's foot: here only the grand total
  if (!many) {
    for (const [name, field, id] of totalRows(def)) {
      const words = id === "upper"
        ? `${name} (${num(tot.upper_subtotal)}/${num(def.upper_bonus.threshold)})` : name;
      const tr = el("tr", { "data-testid": `totals-${id}` });
      tr.append(el("th", { scope: "row" }, words), el("td", { class: "num" }, num(tot[field])));
      body.append(tr);
    }
  }
  const tr = el("tr", { class: "total" });
  tr.append(el("th", { scope: "row" }, t(many ? "grandTotal" : "total")),
            el("td", { class: "num", "data-testid": "total" }, num(tot.total)));
  body.append(tr);
}

/** A five-of-a-kind bonus by its name ("Five-of-a-kind bonus +100"): a bare "+100" would not
 * say what it is. */
function bonusText(bonus) {
  return `${t("fiveBonus")} +${num(bonus)}`;
}

function moveText(a) {
  if (a.action === "keep") {
    let text = `${t("keep")} ${a.dice.length ? a.dice.join("-") : t("nothing")}`;
    if (state.def.em_baixo && a.em_baixo) text += ` · ${t("emBaixoNext")}`;
    else if (state.def.em_baixo && state.emBaixo) text += ` · ${t("topNext")}`;
    return text;
  }
  const extra = [a.five_of_a_kind_bonus ? bonusText(a.five_of_a_kind_bonus) : "",
                 a.wins_game ? t("winsGame") : ""].filter(Boolean).join(", ");
  return `${t("write")} ${boxName(a.box, a.column)} = ${num(a.score)}${extra ? ` (${extra})` : ""}`;
}

function follow(a) {
  if (a.action === "keep") applyKeep(a);
  else write(a.box, a.column);
}

function renderAdvice() {
  const host = $("advice");
  const best = $("best");
  const advice = state.advice;
  keepingFocus(host, () => {
    host.innerHTML = "";
    best.innerHTML = "";
    if (!advice || state.over || state.busy) {
      if (state.throw > 0 && !state.over && !state.busy) {
        host.append(el("p", { class: "hint" }, t("loading")));
      }
      return;
    }
    const top = el("button", { class: "move", "data-testid": "best-move",
                               "data-action": advice.best.action, id: "best-move" },
                   moveText(advice.best));
    top.addEventListener("click", () => follow(advice.best));
    best.append(`${t("best")} `, top);
    const table = el("table", { class: "advice-list" });
    const head = el("tr");
    head.append(el("th", { scope: "col" }, t("move")),
                el("th", { scope: "col", class: "num" }, t("expected")),
                el("th", { scope: "col", class: "num" }, t("regret")));
    table.appendChild(el("thead")).append(head);
    const body = table.appendChild(el("tbody"));
    advice.moves.slice(0, 12).forEach((a, i) => {
      const tr = el("tr", { class: a.rank === 1 ? "best" : "" });
      const go = el("button", { class: "move", "data-testid": i === 0 ? "apply-best" : `apply-${i}`,
                                "data-action": a.action }, moveText(a));
      go.addEventListener("click", () => follow(a));
      const td = el("td");
      td.append(go);
      tr.append(td, el("td", { class: "num", "data-testid": `expected-${i}` },
                       num(a.expected_final_score, 2)),
                el("td", { class: "num", "data-testid": `regret-${i}` }, num(a.regret, 2)));
      body.append(tr);
    });
    host.append(table);
    if (!advice.exact) host.append(el("p", { class: "hint", "data-testid": "approximate" },
                                      t("approximate")));
  });
}

function lastMoveText(p) {
  if (p.now) {
    let text = t("throws", { dice: p.now.dice.join(" ") });
    if (p.now.emBaixo) text += ` (${t("emBaixoMark")})`;
    if (p.now.keep) {
      text += ` · ${t("keeps", { dice: p.now.keep.dice.length ? p.now.keep.dice.join("-")
        : t("nothing") })}`;
      if (p.now.keep.emBaixo) text += ` · ${t("emBaixoNext")}`;
    }
    return text;
  }
  if (!p.last) return "";
  return t("wrote", { box: boxName(p.last.box, p.last.column), score: num(p.last.score) })
    + (p.last.emBaixo ? ` (${t("emBaixoMark")})` : "");
}

function renderPlayers() {
  const table = $("players");
  table.innerHTML = "";
  const head = el("tr");
  head.append(el("th", { scope: "col" }, t("player")), el("th", { scope: "col" }, t("level")),
              el("th", { scope: "col", class: "num" }, t("total")),
              el("th", { scope: "col" }, t("lastMove")));
  table.appendChild(el("thead")).append(head);
  const body = table.appendChild(el("tbody"));
  const you = { level: "", total: state.totals ? state.totals.total : 0, last: state.you.last,
                now: null };
  [you, ...state.bots].forEach((p, i) => {
    const moving = p === state.moving;
    const winner = state.result && state.result.winners.includes(i);
    const tr = el("tr", { "data-testid": `player-${i}`,
                          class: [moving ? "moving" : "", winner ? "winner" : ""].join(" "),
                          "aria-current": moving ? "true" : null });
    const name = el("th", { scope: "row" });
    if (moving) name.append(el("span", { class: "marker", "aria-hidden": "true" }, "▶ "));
    name.append(playerName(i));
    tr.append(name, el("td", {}, p.level ? t(p.level) : ""),
              el("td", { class: "num", "data-testid": `player-total-${i}` }, num(p.total)),
              el("td", { "data-testid": `player-last-${i}` }, lastMoveText(p)));
    body.append(tr);
  });
  $("players-section").hidden = !state.bots.length && !state.def;
  // the computer playing, in the turn's panel too (which a phone keeps in sight)
  const moving = state.bots.indexOf(state.moving);
  $("watch").textContent = moving >= 0
    ? `▶ ${playerName(moving + 1)}: ${lastMoveText(state.moving)}` : "";
}

// ------------------------------------------------------------------------------ charts

const SVG = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The width a chart is drawn at: its box on the page, in CSS pixels (drawn at scale 1, so
 * that its text keeps its size on a phone). */
function chartWidth(svg) {
  return Math.max(240, Math.floor(svg.parentElement.clientWidth || 320));
}

function fillTable(table, headers, rows) {
  table.innerHTML = "";
  const head = el("tr");
  headers.forEach((h, i) => head.append(el("th", { scope: "col", class: i ? "num" : "" }, h)));
  table.appendChild(el("thead")).append(head);
  const body = table.appendChild(el("tbody"));
  for (const row of rows) {
    const tr = el("tr");
    row.forEach((cell, i) => tr.append(i ? el("td", { class: "num" }, cell)
      : el("th", { scope: "row" }, cell)));
    body.append(tr);
  }
}

/** Each player's share of the win: games/win-probability during the game, the result once
 * it is over. */
function chanceRows() {
  if (state.over && state.result) {
    const k = state.result.winners.length;
    return state.result.totals.map((_, i) => ({
      name: playerName(i), share: state.result.winners.includes(i) ? 1 / k : 0 }));
  }
  if (!state.chances) return [];
  return state.chances.players.map((p, i) => ({ name: playerName(i), share: p.share }));
}

function drawChances() {
  const figure = $("chances-figure");
  const svg = $("chances-chart");
  figure.hidden = !state.bots.length;
  svg.innerHTML = "";
  const rows = chanceRows();
  const caption = $("chances-caption");
  if (!rows.length) {
    caption.textContent = state.bots.length ? t("loading") : "";
    fillTable($("chances-table"), [t("player"), t("share")], []);
    return;
  }
  const width = chartWidth(svg);
  const row = 26;
  const nameWidth = Math.min(150, Math.floor(width * 0.36));
  const barMax = width - nameWidth - 70;
  svg.setAttribute("width", width);
  svg.setAttribute("height", row * rows.length + 4);
  svg.setAttribute("viewBox", `0 0 ${width} ${row * rows.length + 4}`);
  rows.forEach((p, i) => {
    const y = i * row + 3;
    const w = Math.max(1, barMax * p.share);
    svg.append(svgEl("text", { x: 0, y: y + 15 }, p.name));
    svg.append(svgEl("rect", { x: nameWidth, y, width: w, height: row - 8,
                               class: i === 0 ? "bar-you" : "bar-bot",
                               "data-testid": `chance-${i}` }));
    svg.append(svgEl("text", { x: nameWidth + w + 6, y: y + 15 }, pct(p.share)));
  });
  const summary = rows.map((p) => `${p.name} ${pct(p.share)}`).join(", ");
  let text = state.over ? `${t("finalChances")}: ${summary}` : summary;
  if (!state.over && state.chances && !state.chances.exact) text += ` (${t("estimated")})`;
  caption.textContent = text;
  fillTable($("chances-table"), [t("player"), t("share")],
            rows.map((p) => [p.name, pct(p.share)]));
}

/** A distribution's histogram in at most MAX_BINS bars of equal width over the range that
 * holds all but TAIL of it at each end; each tail folds into the first or the last bar. */
function binned(hist) {
  let cum = 0;
  let lo = hist[0].score;
  let hi = hist[hist.length - 1].score;
  for (const h of hist) {
    if (cum + h.probability > TAIL) {
      lo = h.score;
      break;
    }
    cum += h.probability;
  }
  cum = 0;
  for (let i = hist.length - 1; i >= 0; i--) {
    if (cum + hist[i].probability > TAIL) {
      hi = hist[i].score;
      break;
    }
    cum += hist[i].probability;
  }
  const span = hi - lo + 1;
  const width = Math.max(1, Math.ceil(span / MAX_BINS));
  const n = Math.ceil(span / width);
  const bins = Array.from({ length: n }, (_, i) => ({
    from: lo + i * width, to: Math.min(hi, lo + (i + 1) * width - 1), p: 0 }));
  for (const h of hist) {
    const i = Math.min(n - 1, Math.max(0, Math.floor((h.score - lo) / width)));
    bins[i].p += h.probability;
  }
  bins[0].folded = hist[0].score < lo;
  bins[n - 1].folded = hist[hist.length - 1].score > hi;
  return bins;
}

function binLabel(b, i, n) {
  if (i === 0 && b.folded) return `≤ ${num(b.to)}`;
  if (i === n - 1 && b.folded) return `≥ ${num(b.from)}`;
  return b.from === b.to ? num(b.from) : `${num(b.from)}–${num(b.to)}`;
}

function drawFinal() {
  const svg = $("final-chart");
  const caption = $("final-caption");
  svg.innerHTML = "";
  let bins;
  let text;
  if (state.over && state.totals) {
    const total = state.totals.total;
    bins = [{ from: total, to: total, p: 1 }];
    text = t("finalAt", { total: num(total) });
  } else if (state.value) {
    const dist = state.value;
    bins = dist.histogram && dist.histogram.length ? binned(dist.histogram) : [];
    const q = dist.percentiles || {};
    text = t("finalSummary", { mean: num(dist.mean, 1), sd: num(dist.sd, 1),
                               p25: num(q["25"]), p75: num(q["75"]) });
    text += dist.exact ? ` (${t("exactDist")})` : ` (${t("sampled", { n: num(dist.samples) })})`;
  } else {
    caption.textContent = state.def ? t("loading") : "";
    fillTable($("final-table"), [t("finalScore"), t("probability")], []);
    return;
  }
  caption.textContent = text;
  svg.dataset.sampled = state.value && !state.value.exact && !state.over ? "true" : "false";
  const width = chartWidth(svg);
  const height = 140;
  svg.setAttribute("width", width);
  svg.setAttribute("height", height + 22);
  svg.setAttribute("viewBox", `0 0 ${width} ${height + 22}`);
  if (bins.length) {
    const top = Math.max(...bins.map((b) => b.p)) || 1;
    const bw = (width - 10) / bins.length;
    bins.forEach((b) => {
      const bh = Math.max(b.p > 0 ? 1 : 0, (height - 8) * b.p / top);
      svg.append(svgEl("rect", { x: 5 + bins.indexOf(b) * bw, y: height - bh,
                                 width: Math.max(1, bw - 1), height: bh,
                                 class: state.value && !state.value.exact && !state.over
                                   ? "bar-you sampled" : "bar-you" }));
    });
    const n = bins.length;
    svg.append(svgEl("text", { x: 5, y: height + 16 }, binLabel(bins[0], 0, n)));
    if (n > 1) {
      svg.append(svgEl("text", { x: width - 5, y: height + 16, "text-anchor": "end" },
                       binLabel(bins[n - 1], n - 1, n)));
    }
  }
  fillTable($("final-table"), [t("finalScore"), t("probability")],
            bins.map((b, i) => [binLabel(b, i, bins.length), pct(b.p)]));
}

function clearCharts() {
  for (const id of ["chances-chart", "final-chart", "chances-table", "final-table"]) {
    $(id).innerHTML = "";
  }
  $("chances-caption").textContent = t("loading");
  $("final-caption").textContent = t("loading");
}

function drawCharts() {
  drawChances();
  drawFinal();
}

async function refreshCharts(game) {
  if (state.over) return;
  const turn = state.turn;
  const current = () => game === state.game && turn === state.turn && !state.over;
  try {
    const value = await api("POST", `${base()}/positions/value`, {
      options: state.options, scorecard: state.scorecard, histogram: true });
    if (!current()) return;
    state.value = value.distribution;
    drawFinal();
    if (state.bots.length) {
      const chances = await api("POST", `${base()}/games/win-probability`, {
        options: state.options,
        players: [{ name: "you", scorecard: state.scorecard },
                  ...state.bots.map((b) => ({ name: `computer ${b.n}`,
                                              scorecard: b.scorecard }))],
      });
      if (!current()) return;
      state.chances = chances;
      drawChances();
    }
  } catch (err) {
    if (game === state.game) message(err.message);
  }
}

// ------------------------------------------------------------------------------ language

function translate() {
  document.documentElement.lang = state.lang;
  document.title = `${t("title")} · Yahtzee family scoring service`;
  for (const node of document.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.dataset.i18n);
  }
  for (const node of document.querySelectorAll("[data-i18n-label]")) {
    node.setAttribute("aria-label", t(node.dataset.i18nLabel));
  }
  if (state.variants.length) {
    const values = readOptions();
    renderVariantChoices();
    renderOptions(values);
  }
  renderBotChoices();
  renderPending();
  if (state.def) {
    renderAll();
    drawCharts();
  }
  $("status").textContent = state.statusText ? state.statusText() : "";
}

// ------------------------------------------------------------------------------ wiring

async function start() {
  // the page (re)starts with the key it has: the key it last started with is remembered, so
  // the same key sent again (the field's change event fires again when it loses focus) does
  // not start a second game under the first one
  state.startedWith = apiKey();
  const run = ++state.starts;
  delete document.body.dataset.ready;
  try {
    await loadVariants();
  } catch (err) {
    state.startedWith = null;
    throw err;
  }
  renderVariantChoices();
  renderOptions();
  renderBotChoices();
  translate();
  await newGame();
  if (run === state.starts) document.body.dataset.ready = "true";  // the last start's game
}

function startingLanguage() {
  const stored = localStorage.getItem(LANG_STORE);
  if (LANGS.includes(stored)) return stored;
  const browser = (navigator.language || "en").slice(0, 2);
  return LANGS.includes(browser) ? browser : "en";
}

async function main() {
  UI = await (await fetch(WORDS_URL)).json();
  state.lang = startingLanguage();
  $("lang").value = state.lang;
  translate();
  $("api-key").value = apiKey();
  $("api-key").addEventListener("change", () => {
    const key = $("api-key").value.trim();
    if (key === state.startedWith) return;
    sessionStorage.setItem(KEY_STORE, key);
    start().catch((err) => message(err.message));
  });
  $("variant").addEventListener("change", () => {
    renderOptions();
    settingsChanged();
  });
  $("options").addEventListener("change", () => settingsChanged());
  $("bots").addEventListener("change", () => settingsChanged());
  $("lang").addEventListener("change", () => {
    state.lang = $("lang").value;
    localStorage.setItem(LANG_STORE, state.lang);
    translate();
  });
  $("new-game").addEventListener("click", () => askNewGame());
  $("confirm-yes").addEventListener("click", () => {
    $("confirm").close();  // the focus back on New game, until Roll can take it
    newGame({ focusRoll: true });
  });
  $("confirm-no").addEventListener("click", () => {
    $("confirm").close();
    $("new-game").focus();
  });
  $("roll").addEventListener("click", () => roll());
  $("set-dice").addEventListener("click", () => setDice());
  $("typed").addEventListener("keydown", (e) => {
    if (e.key === "Enter") setDice();
  });
  // whatever takes the focus in the game (a box, a move of the advice) is not left under the
  // turn's panel; the browser has scrolled it into the window first, if it was out
  document.querySelector("main").addEventListener("focusin", (e) => {
    const node = e.target;
    requestAnimationFrame(() => {
      if (document.activeElement === node) reveal(node);
    });
  });
  $("sheet").addEventListener("click", (e) => {
    const b = e.target.closest("button.write");
    if (b) write(b.dataset.box, b.dataset.column ? Number(b.dataset.column) : null);
  });
  let resize = null;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = setTimeout(() => state.def && drawCharts(), 150);
  });
  await start();
}

main().catch((err) => message(err.message));
