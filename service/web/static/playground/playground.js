// The playground: a whole game played in the browser through the service's public API only
// (GET /v1/variants, POST rules, hands/score, moves/suggest, games/turn, and scorecards/score
// for a new sheet's totals), against up to three computers (moves/bot), with each player's
// chance to win (games/win-probability) and your final score's distribution
// (positions/value) drawn after every round. No build step, no library, nothing from another
// host: the charts are the page's own SVG.
"use strict";

const UI = {
  en: { title: "Playground", variant: "Variant", language: "Language", newGame: "New game",
        turn: "Turn", throw: "Throw", roll: "Roll", setDice: "Set dice", emBaixo: "Em baixo",
        keepHint: "Click a die to keep it; roll throws the others.", advice: "Advice",
        boxes: "Boxes for this hand", scorecard: "Scorecard", box: "Box", score: "Score",
        keep: "Keep", write: "Write", expected: "Expected final score", regret: "Regret",
        upper: "Upper section", upperBonus: "Upper bonus", lower: "Lower section",
        fiveBonus: "Five-of-a-kind bonus", total: "Total", gameOver: "Game over: {total} points",
        won: "Won at once! {total} points", rollFirst: "Roll the dice (or type them) first.",
        nothing: "keep nothing", column: "col.",
        apiKey: "API key",
        needKey: "This server asks for an API key: paste your tenant's key (yz_…) in the API key field; it is sent as Authorization: Bearer." },
  pt: { title: "Playground", variant: "Variante", language: "Idioma", newGame: "Novo jogo",
        turn: "Rodada", throw: "Lance", roll: "Jogar", setDice: "Usar dados",
        emBaixo: "Em baixo", keepHint: "Clique num dado para guardá-lo; jogar lança os outros.",
        advice: "Conselho", boxes: "Casas para esta jogada", scorecard: "Tabela", box: "Casa",
        score: "Pontos", keep: "Guardar", write: "Marcar", expected: "Total final esperado",
        regret: "Perda", upper: "Parte de cima", upperBonus: "Bônus de cima",
        lower: "Parte de baixo", fiveBonus: "Bônus de general", total: "Total",
        gameOver: "Fim de jogo: {total} pontos", won: "Vitória imediata! {total} pontos",
        rollFirst: "Jogue os dados (ou digite-os) primeiro.", nothing: "não guardar nada",
        column: "col.",
        apiKey: "Chave da API",
        needKey: "Este servidor pede uma chave da API: cole a chave do seu tenant (yz_…) no campo Chave da API; ela vai como Authorization: Bearer." },
  es: { title: "Playground", variant: "Variante", language: "Idioma", newGame: "Nueva partida",
        turn: "Turno", throw: "Tiro", roll: "Tirar", setDice: "Usar dados", emBaixo: "Em baixo",
        keepHint: "Haga clic en un dado para guardarlo; tirar lanza los demás.",
        advice: "Consejo", boxes: "Casillas para esta mano", scorecard: "Planilla",
        box: "Casilla", score: "Puntos", keep: "Guardar", write: "Anotar",
        expected: "Puntaje final esperado", regret: "Pérdida", upper: "Parte superior",
        upperBonus: "Bono superior", lower: "Parte inferior", fiveBonus: "Bono de generala",
        total: "Total", gameOver: "Fin de la partida: {total} puntos",
        won: "¡Ganó de inmediato! {total} puntos",
        rollFirst: "Primero tire los dados (o escríbalos).", nothing: "no guardar nada",
        column: "col.",
        apiKey: "Clave de API",
        needKey: "Este servidor pide una clave de API: pegue la clave de su tenant (yz_…) en el campo Clave de API; se envía como Authorization: Bearer." },
  de: { title: "Spielwiese", variant: "Variante", language: "Sprache", newGame: "Neues Spiel",
        turn: "Runde", throw: "Wurf", roll: "Würfeln", setDice: "Würfel setzen",
        emBaixo: "Em baixo", keepHint: "Würfel anklicken zum Behalten; Würfeln wirft die anderen.",
        advice: "Rat", boxes: "Felder für diesen Wurf", scorecard: "Spielblock", box: "Feld",
        score: "Punkte", keep: "Behalten", write: "Eintragen",
        expected: "Erwartete Endpunktzahl", regret: "Verlust", upper: "Oberer Teil",
        upperBonus: "Bonus oben", lower: "Unterer Teil", fiveBonus: "Kniffel-Bonus",
        total: "Gesamt", gameOver: "Spielende: {total} Punkte", won: "Sofort gewonnen! {total} Punkte",
        rollFirst: "Erst würfeln (oder Würfel eingeben).", nothing: "nichts behalten",
        column: "Sp.",
        apiKey: "API-Schlüssel",
        needKey: "Dieser Server verlangt einen API-Schlüssel: den Schlüssel Ihres Mandanten (yz_…) ins Feld API-Schlüssel einfügen; er wird als Authorization: Bearer gesendet." },
  sv: { title: "Lekplats", variant: "Variant", language: "Språk", newGame: "Nytt spel",
        turn: "Runda", throw: "Kast", roll: "Kasta", setDice: "Sätt tärningar",
        emBaixo: "Em baixo", keepHint: "Klicka på en tärning för att spara den; kasta slår om resten.",
        advice: "Råd", boxes: "Rutor för denna hand", scorecard: "Protokoll", box: "Ruta",
        score: "Poäng", keep: "Spara", write: "Skriv", expected: "Förväntad slutpoäng",
        regret: "Förlust", upper: "Övre delen", upperBonus: "Bonus", lower: "Nedre delen",
        fiveBonus: "Yatzybonus", total: "Summa", gameOver: "Spelet slut: {total} poäng",
        won: "Vann direkt! {total} poäng", rollFirst: "Kasta tärningarna (eller skriv dem) först.",
        nothing: "spara inget", column: "kol.",
        apiKey: "API-nyckel",
        needKey: "Servern kräver en API-nyckel: klistra in din nyckel (yz_…) i fältet API-nyckel; den skickas som Authorization: Bearer." },
  fr: { title: "Bac à sable", variant: "Variante", language: "Langue", newGame: "Nouvelle partie",
        turn: "Tour", throw: "Lancer", roll: "Lancer", setDice: "Poser les dés",
        emBaixo: "Em baixo", keepHint: "Cliquez sur un dé pour le garder ; lancer relance les autres.",
        advice: "Conseil", boxes: "Cases pour cette main", scorecard: "Feuille de score",
        box: "Case", score: "Points", keep: "Garder", write: "Inscrire",
        expected: "Score final attendu", regret: "Perte", upper: "Partie haute",
        upperBonus: "Prime", lower: "Partie basse", fiveBonus: "Prime de Yam's", total: "Total",
        gameOver: "Fin de partie : {total} points", won: "Gagné d'un coup ! {total} points",
        rollFirst: "Lancez les dés (ou tapez-les) d'abord.", nothing: "ne rien garder",
        column: "col.",
        apiKey: "Clé d'API",
        needKey: "Ce serveur demande une clé d'API : collez la clé de votre locataire (yz_…) dans le champ Clé d'API ; elle est envoyée en Authorization: Bearer." },
};

// Playing against the computer: the opponents' words, per language.
const BOT_UI = {
  en: { computer: "Computer {n}", beginner: "beginner", casual: "casual", strong: "strong",
        expert: "expert", you: "You", players: "Players", level: "Level",
        lastMove: "Last move", chances: "Chance to win", yourFinal: "Your final score",
        winner: "{name} wins with {total} points", tie: "Tie at {total} points: {names}",
        keeps: "keeps", writes: "writes",
        wonBy: "{name} won at once! {total} points",
        youWin: "You win with {total} points" },
  pt: { computer: "Computador {n}", beginner: "iniciante", casual: "casual", strong: "forte",
        expert: "especialista", you: "Você", players: "Jogadores", level: "Nível",
        lastMove: "Última jogada", chances: "Chance de vencer", yourFinal: "Seu total final",
        winner: "{name} vence com {total} pontos", tie: "Empate com {total} pontos: {names}",
        keeps: "guarda", writes: "marca",
        wonBy: "{name} venceu de imediato! {total} pontos",
        youWin: "Você vence com {total} pontos" },
  es: { computer: "Computadora {n}", beginner: "principiante", casual: "casual",
        strong: "fuerte", expert: "experto", you: "Usted", players: "Jugadores",
        level: "Nivel", lastMove: "Última jugada", chances: "Probabilidad de ganar",
        yourFinal: "Su puntaje final", winner: "{name} gana con {total} puntos",
        tie: "Empate con {total} puntos: {names}", keeps: "guarda", writes: "anota",
        wonBy: "¡{name} ganó de inmediato! {total} puntos",
        youWin: "Usted gana con {total} puntos" },
  de: { computer: "Computer {n}", beginner: "Anfänger", casual: "Gelegenheitsspieler",
        strong: "stark", expert: "Experte", you: "Sie", players: "Spieler", level: "Stufe",
        lastMove: "Letzter Zug", chances: "Gewinnchance", yourFinal: "Ihre Endpunktzahl",
        winner: "{name} gewinnt mit {total} Punkten",
        tie: "Gleichstand bei {total} Punkten: {names}", keeps: "behält",
        writes: "trägt ein",
        wonBy: "{name} hat sofort gewonnen! {total} Punkte",
        youWin: "Sie gewinnen mit {total} Punkten" },
  sv: { computer: "Dator {n}", beginner: "nybörjare", casual: "vardagsspelare",
        strong: "stark", expert: "expert", you: "Du", players: "Spelare", level: "Nivå",
        lastMove: "Senaste drag", chances: "Chans att vinna", yourFinal: "Din slutpoäng",
        winner: "{name} vinner med {total} poäng", tie: "Oavgjort på {total} poäng: {names}",
        keeps: "sparar", writes: "skriver",
        wonBy: "{name} vann direkt! {total} poäng",
        youWin: "Du vinner med {total} poäng" },
  fr: { computer: "Ordinateur {n}", beginner: "débutant", casual: "amateur", strong: "fort",
        expert: "expert", you: "Vous", players: "Joueurs", level: "Niveau",
        lastMove: "Dernier coup", chances: "Chance de gagner", yourFinal: "Votre score final",
        winner: "{name} gagne avec {total} points", tie: "Égalité à {total} points : {names}",
        keeps: "garde", writes: "inscrit",
        wonBy: "{name} a gagné d'un coup ! {total} points",
        youWin: "Vous gagnez avec {total} points" },
};
for (const [lang, words] of Object.entries(BOT_UI)) Object.assign(UI[lang], words);

const LEVELS = ["beginner", "casual", "strong", "expert"];
const MAX_BOTS = 3;
// Milliseconds between a computer's moves, so that its turn can be watched (?pause=0 in
// tests).
const PAUSE = Number(new URLSearchParams(location.search).get("pause") ?? 700);

const $ = (id) => document.getElementById(id);
const state = {
  variants: [], def: null, lang: "en", options: {}, scorecard: null,
  dice: [], kept: [], throw: 0, turn: 1, totals: null, over: false,
  bots: [], busy: false,
};

function t(key, vars) {
  let text = (UI[state.lang] || UI.en)[key] || UI.en[key] || key;
  for (const [k, v] of Object.entries(vars || {})) text = text.replace(`{${k}}`, v);
  return text;
}

function label(boxId) {
  const box = state.def.boxes.find((b) => b.id === boxId);
  return box ? (box.labels[state.lang] || box.labels.en) : boxId;
}

// A server run with AUTH=keys wants a tenant's API key on every /v1/ request: the one typed
// in the API key field (kept for this tab only), sent as `Authorization: Bearer <key>`.
const KEY_STORE = "yahtzee-api-key";

function apiKey() {
  return sessionStorage.getItem(KEY_STORE) || "";
}

async function api(method, path, body) {
  // 202: the advisor's table of these rules is being built; the same request, asked again
  // after Retry-After seconds, gets the answer (a few tries, then the detail is shown).
  for (let attempt = 0; ; attempt++) {
    const headers = body ? { "Content-Type": "application/json" } : {};
    if (apiKey()) headers.Authorization = `Bearer ${apiKey()}`;
    const res = await fetch(path, {
      method, headers, body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (res.status === 401) throw new Error(`${t("needKey")} (${data.detail})`);
    if (res.status === 202 && attempt < 20) {
      const wait = Number(res.headers.get("Retry-After")) || data.retry_after || 1;
      await new Promise((done) => setTimeout(done, wait * 1000));
      continue;
    }
    if (!res.ok || res.status === 202) throw new Error(data.detail || `${res.status}`);
    return data;
  }
}

function common() {
  const body = { options: state.options, scorecard: state.scorecard };
  if (state.def.em_baixo && $("em-baixo").checked) body.em_baixo = true;
  return body;
}

function emptyScorecard() {
  const column = () => ({
    boxes: Object.fromEntries(state.def.boxes.map((b) => [b.id, null])),
    five_of_a_kind_bonuses: 0,
  });
  const card = state.def.columns.length
    ? { columns: state.def.columns.map(column) } : column();
  card.saved_throws = 0;
  card.won = false;
  return card;
}

function maxThrow() {
  return state.def.throws + (state.def.saved_throws ? state.scorecard.saved_throws : 0);
}

// ------------------------------------------------------------------------------ set-up

async function loadVariants() {
  state.variants = (await api("GET", "/v1/variants")).variants;
  const select = $("variant");
  select.innerHTML = "";
  for (const v of state.variants) select.add(new Option(v.name, v.id));
  select.value = "yahtzee";
}

function renderOptions() {
  const base = state.variants.find((v) => v.id === $("variant").value);
  const host = $("options");
  host.innerHTML = "";
  for (const opt of base.options) {
    const wrap = document.createElement("label");
    wrap.append(`${opt.name} `);
    let input;
    if (opt.choices.length === 2 && opt.choices.includes(true)) {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = opt.default === true;
    } else {
      input = document.createElement("select");
      for (const c of opt.choices) input.add(new Option(String(c), String(c)));
      input.value = String(opt.default);
    }
    input.dataset.option = opt.name;
    input.dataset.testid = `option-${opt.name}`;
    input.title = opt.description;
    wrap.append(input);
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

async function newGame() {
  state.options = readOptions();
  const id = $("variant").value;
  state.def = (await api("POST", `/v1/variants/${id}/rules`, { options: state.options }))
    .definition;
  state.scorecard = emptyScorecard();
  state.turn = 1;
  state.over = false;
  state.bots = readBots().map((level, i) => ({
    name: t("computer", { n: i + 1 }), n: i + 1, level, scorecard: emptyScorecard(),
    total: 0, last: "", seed: Math.floor(Math.random() * 2 ** 31),
  }));
  $("em-baixo-wrap").hidden = !state.def.em_baixo;
  $("game-over").hidden = true;
  startTurn();
  await refreshTotals();
  renderPlayers();
  await refreshCharts();
}

function startTurn() {
  state.dice = Array(state.def.dice).fill(null);
  state.kept = Array(state.def.dice).fill(false);
  state.throw = 0;
  message("");
  render();
}

// ------------------------------------------------------------------------------ a turn

function message(text) { $("message").textContent = text; }

async function roll() {
  if (state.over || state.throw >= maxThrow()) return;
  state.dice = state.dice.map((d, i) => (state.throw > 0 && state.kept[i] ? d
    : 1 + Math.floor(Math.random() * 6)));
  state.throw += 1;
  if (state.throw === 1) state.kept.fill(false);
  await afterDice();
}

async function setDice() {
  const faces = $("typed").value.trim().split(/[\s,]+/).map(Number);
  if (faces.length !== state.def.dice || faces.some((f) => !(f >= 1 && f <= 6))) {
    message(`${state.def.dice} × 1-6`);
    return;
  }
  state.dice = faces;
  state.kept.fill(false);
  state.throw = Math.min(Math.max(state.throw + 1, 1), maxThrow());
  await afterDice();
}

async function afterDice() {
  message("");
  $("placements").innerHTML = "";
  $("advice").innerHTML = "";
  render();
  const base = `/v1/variants/${state.def.id}`;
  const body = { ...common(), dice: state.dice, throw: state.throw };
  try {
    const [hand, advice] = await Promise.all([
      api("POST", `${base}/hands/score`, body),
      api("POST", `${base}/moves/suggest`, body),
    ]);
    renderPlacements(hand);
    renderAdvice(advice);
  } catch (err) {
    message(err.message);
  }
}

function toggleKeep(i) {
  if (state.throw === 0 || state.throw >= maxThrow()) return;
  state.kept[i] = !state.kept[i];
  renderDice();
}

function applyKeep(dice) {
  const want = [...dice];
  state.kept = state.dice.map((d) => {
    const at = want.indexOf(d);
    if (at < 0) return false;
    want.splice(at, 1);
    return true;
  });
  renderDice();
}

async function write(placement) {
  // The service plays the turn (games/turn): it writes the box, counts a five-of-a-kind
  // bonus, saves unused throws (Maxi Yatzy), marks a won game, and answers the scorecard to
  // send next time with its totals. The page keeps no score of its own.
  const body = { ...common(), dice: state.dice, throw: state.throw, box: placement.box };
  if (placement.column) body.column = placement.column;
  let played;
  try {
    played = await api("POST", `/v1/variants/${state.def.id}/games/turn`, body);
  } catch (err) {
    message(err.message);
    return;
  }
  state.scorecard = played.scorecard;
  state.totals = played.totals;
  renderSheet();
  renderPlayers();
  $("placements").innerHTML = "";
  $("advice").innerHTML = "";
  let wonAtOnce = played.won ? 0 : -1;  // the player who won at once (0: you)
  if (wonAtOnce < 0 && state.bots.length) {
    setBusy(true);
    try {
      for (const bot of state.bots) {
        if (await botTurn(bot)) {
          wonAtOnce = bot.n;
          break;
        }
      }
    } catch (err) {
      message(err.message);
    } finally {
      setBusy(false);
    }
  }
  if (played.game_over || wonAtOnce >= 0) {
    endGame(wonAtOnce);
    return;
  }
  state.turn = played.turn + 1;
  startTurn();
  await refreshCharts();
}

// ------------------------------------------------------------------------------ computers

function readBots() {
  return [...$("bots").querySelectorAll("select")].map((s) => s.value).filter(Boolean);
}

function renderBotChoices() {
  const host = $("bots");
  const chosen = [...host.querySelectorAll("select")].map((s) => s.value);
  host.innerHTML = "";
  for (let i = 0; i < MAX_BOTS; i++) {
    const wrap = document.createElement("label");
    wrap.append(`${t("computer", { n: i + 1 })} `);
    const select = document.createElement("select");
    select.dataset.testid = `bot-${i + 1}`;
    select.add(new Option("—", ""));
    for (const level of LEVELS) select.add(new Option(t(level), level));
    select.value = chosen[i] || "";
    wrap.append(select);
    host.append(wrap);
  }
}

function setBusy(busy) {
  state.busy = busy;
  document.body.dataset.busy = busy ? "true" : "false";
  render();
}

const pause = () => new Promise((done) => setTimeout(done, PAUSE));

function roll5(dice, kept) {
  return dice.map((d, i) => (kept[i] ? d : 1 + Math.floor(Math.random() * 6)));
}

// One computer's turn, through moves/bot (its move at its level) and games/turn (the
// service writes it, as it writes yours): shown move by move. True when it won at once.
async function botTurn(bot) {
  const base = `/v1/variants/${state.def.id}`;
  let dice = roll5(Array(state.def.dice).fill(null), []);
  let throwNo = 1;
  let emBaixo = false;
  for (;;) {
    bot.dice = [...dice].sort((a, b) => a - b);
    renderPlayers(bot);
    await pause();
    const body = { options: state.options, scorecard: bot.scorecard, dice, throw: throwNo,
                   level: bot.level, seed: bot.seed };
    if (emBaixo) body.em_baixo = true;
    const { move, throws_left: left } = await api("POST", `${base}/moves/bot`, body);
    if (move.action === "keep" && left > 0) {
      bot.last = `${t("keeps")} ${move.dice.length ? move.dice.join("-") : `(${t("nothing")})`}`;
      // the kept dice as the service read them: by their bottom faces after "em baixo"
      const faces = emBaixo ? dice.map((d) => 7 - d) : dice;
      const want = [...move.dice];
      const kept = faces.map((d) => {
        const at = want.indexOf(d);
        if (at < 0) return false;
        want.splice(at, 1);
        return true;
      });
      dice = roll5(dice, kept);
      throwNo += 1;
      emBaixo = move.em_baixo;
      continue;
    }
    const turn = { options: state.options, scorecard: bot.scorecard, dice, throw: throwNo,
                   box: move.box };
    if (move.column) turn.column = move.column;
    if (emBaixo) turn.em_baixo = true;
    const played = await api("POST", `${base}/games/turn`, turn);
    bot.scorecard = played.scorecard;
    bot.total = played.totals.total;
    bot.last = `${t("writes")} ${label(move.box)} = ${move.score}`;
    bot.dice = null;
    renderPlayers();
    await pause();
    return played.won;
  }
}

function endGame(wonAtOnce) {
  state.over = true;
  const over = $("game-over");
  over.hidden = false;
  const scores = [{ name: t("you"), total: state.totals.total },
                  ...state.bots.map((b) => ({ name: b.name, total: b.total }))];
  if (!state.bots.length) {
    over.textContent = t(wonAtOnce === 0 ? "won" : "gameOver", { total: state.totals.total });
  } else if (wonAtOnce === 0) {
    over.textContent = t("won", { total: scores[0].total });
  } else if (wonAtOnce > 0) {
    const w = scores[wonAtOnce];
    over.textContent = t("wonBy", { name: w.name, total: w.total });
  } else {
    const top = Math.max(...scores.map((s) => s.total));
    const first = scores.filter((s) => s.total === top);
    if (first.length > 1) {
      over.textContent = t("tie", { total: top, names: first.map((s) => s.name).join(", ") });
    } else {
      over.textContent = first[0] === scores[0] ? t("youWin", { total: top })
        : t("winner", { name: first[0].name, total: top });
    }
  }
  over.dataset.winner = wonAtOnce >= 0 ? String(wonAtOnce) : "";
  render();
  renderPlayers();
}

async function refreshTotals() {
  const body = { ...state.scorecard, options: state.options };
  state.totals = await api("POST", `/v1/variants/${state.def.id}/scorecards/score`, body);
  renderSheet();
}

// ------------------------------------------------------------------------------ drawing

function render() {
  $("turn-no").textContent = state.turn;
  $("throw-no").textContent = state.throw;
  $("throw-max").textContent = state.def ? maxThrow() : 3;
  $("roll").disabled = state.over || state.busy || !state.def || state.throw >= maxThrow();
  $("set-dice").disabled = state.over || state.busy;
  renderDice();
}

function renderDice() {
  const host = $("dice");
  host.innerHTML = "";
  state.dice.forEach((d, i) => {
    const b = document.createElement("button");
    b.className = `die${state.kept[i] ? " kept" : ""}${d === null ? " blank" : ""}`;
    b.textContent = d === null ? "?" : d;
    b.dataset.testid = `die-${i}`;
    b.setAttribute("aria-pressed", state.kept[i] ? "true" : "false");
    b.addEventListener("click", () => toggleKeep(i));
    host.append(b);
  });
}

function renderPlacements(hand) {
  const table = $("placements");
  table.innerHTML = `<tr><th>${t("box")}</th><th class="num">${t("score")}</th><th></th></tr>`;
  for (const p of hand.boxes) {
    if (!p.open) continue;
    const tr = document.createElement("tr");
    tr.className = p.legal ? "legal" : "illegal";
    tr.dataset.testid = `place-${p.box}${p.column ? `-${p.column}` : ""}`;
    const extra = [p.five_of_a_kind_bonus ? `+${p.five_of_a_kind_bonus}` : "",
                   p.joker ? "Joker" : "", p.wins_game ? "★" : ""].filter(Boolean).join(" ");
    tr.innerHTML = `<td>${label(p.box)}${p.column ? ` (${t("column")} ${p.column})` : ""}</td>`
      + `<td class="num">${p.score}</td><td>${extra}</td>`;
    if (p.legal) tr.addEventListener("click", () => write(p));
    table.append(tr);
  }
}

function renderAdvice(advice) {
  const host = $("advice");
  host.innerHTML = "";
  const list = document.createElement("table");
  list.className = "advice-list";
  list.innerHTML = `<tr><th></th><th class="num">${t("expected")}</th>`
    + `<th class="num">${t("regret")}</th><th></th></tr>`;
  for (const a of advice.alternatives.slice(0, 12)) {
    const tr = document.createElement("tr");
    if (a.rank === 1) tr.className = "best";
    const what = a.action === "keep"
      ? `${t("keep")} ${a.dice.length ? a.dice.join("-") : `(${t("nothing")})`}`
        + (a.em_baixo ? ` · ${t("emBaixo")}` : "")
      : `${t("write")} ${label(a.box)}${a.column ? ` (${t("column")} ${a.column})` : ""}`
        + ` = ${a.score}`;
    tr.innerHTML = `<td>${what}</td><td class="num">${a.expected_final_score.toFixed(2)}</td>`
      + `<td class="num">${a.regret.toFixed(2)}</td>`;
    const td = document.createElement("td");
    const go = document.createElement("button");
    go.textContent = "→";
    go.dataset.testid = a === advice.alternatives[0] ? "apply-best" : `apply-${a.action}`;
    go.dataset.action = a.action;
    go.addEventListener("click", () => (a.action === "keep" ? applyKeep(a.dice)
      : write({ box: a.box, column: a.column })));
    td.append(go);
    tr.append(td);
    list.append(tr);
  }
  host.append(list);
  if (!advice.exact) {
    const note = document.createElement("p");
    note.className = "hint";
    note.textContent = advice.method;
    host.append(note);
  }
}

function renderSheet() {
  const table = $("sheet");
  const cols = state.def.columns.length ? state.scorecard.columns : [state.scorecard];
  let html = `<tr><th>${t("box")}</th>${cols.map((_, i) => `<th class="num">${
    cols.length > 1 ? `${t("column")} ${i + 1}` : t("score")}</th>`).join("")}</tr>`;
  for (const box of state.def.boxes) {
    html += `<tr data-testid="sheet-${box.id}"><td>${label(box.id)}</td>${cols.map((c) => {
      const v = c.boxes[box.id];
      return `<td class="num">${v === null ? "" : v}</td>`;
    }).join("")}</tr>`;
  }
  table.innerHTML = html;
  const tot = state.totals;
  const rows = [[t("upper"), tot.upper_subtotal], [t("upperBonus"), tot.upper_bonus],
                [t("lower"), tot.lower_total], [t("fiveBonus"), tot.five_of_a_kind_bonus]];
  $("totals").innerHTML = rows.map(([k, v]) => `<tr><td>${k}</td><td class="num">${v}</td></tr>`)
    .join("") + `<tr class="total"><td>${t("total")}</td>`
    + `<td class="num" data-testid="total">${tot.total}</td></tr>`;
}

function renderPlayers(moving) {
  const table = $("players");
  const you = { name: t("you"), level: "", total: state.totals ? state.totals.total : 0,
                last: "" };
  const rows = [you, ...state.bots];
  table.innerHTML = `<tr><th></th><th>${t("level")}</th><th class="num">${t("total")}</th>`
    + `<th>${t("lastMove")}</th></tr>`;
  rows.forEach((p, i) => {
    const tr = document.createElement("tr");
    tr.dataset.testid = `player-${i}`;
    if (p === moving) tr.className = "moving";
    const dice = p.dice ? ` · ${p.dice.join(" ")}` : "";
    tr.innerHTML = `<td>${p.name}</td><td>${p.level ? t(p.level) : ""}</td>`
      + `<td class="num" data-testid="player-total-${i}">${p.total}</td>`
      + `<td>${p.last || ""}${dice}</td>`;
    table.append(tr);
  });
  $("players-section").hidden = false;
  $("chances-title").hidden = $("chances-chart").hidden = !state.bots.length;
}

const SVG = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// Each player's share of the win (games/win-probability: ties shared), as bars.
function drawChances(players) {
  const svg = $("chances-chart");
  svg.innerHTML = "";
  const row = 22;
  const width = 440;
  svg.setAttribute("viewBox", `0 0 ${width} ${row * players.length + 4}`);
  players.forEach((p, i) => {
    const y = i * row + 2;
    const w = Math.max(1, (width - 190) * p.share);
    svg.append(svgEl("text", { x: 0, y: y + 14 }, p.name));
    svg.append(svgEl("rect", { x: 130, y, width: w, height: row - 6,
                               class: i === 0 ? "bar-you" : "bar-bot",
                               "data-testid": `chance-${i}` }));
    svg.append(svgEl("text", { x: 136 + w, y: y + 14 }, `${(100 * p.share).toFixed(1)} %`));
  });
}

// The distribution of your final score (positions/value with its histogram), as bars.
function drawFinal(dist) {
  const svg = $("final-chart");
  svg.innerHTML = "";
  const hist = dist.histogram || [];
  if (!hist.length) return;
  const width = 440;
  const height = 150;
  const lo = hist[0].score;
  const hi = hist[hist.length - 1].score;
  const span = Math.max(1, hi - lo);
  const top = Math.max(...hist.map((h) => h.probability));
  svg.setAttribute("viewBox", `0 0 ${width} ${height + 18}`);
  const bw = Math.max(1, (width - 10) / (span + 1));
  for (const h of hist) {
    const bh = (height - 10) * h.probability / top;
    svg.append(svgEl("rect", { x: 5 + (h.score - lo) * bw, y: height - bh, width: bw,
                               height: bh, class: "bar-you" }));
  }
  svg.append(svgEl("text", { x: 5, y: height + 14 }, String(lo)));
  svg.append(svgEl("text", { x: width - 5, y: height + 14, "text-anchor": "end" },
                   String(hi)));
  svg.append(svgEl("text", { x: width / 2, y: height + 14, "text-anchor": "middle",
                             "data-testid": "final-mean" },
                   `${dist.mean.toFixed(1)} ± ${dist.sd.toFixed(1)}`));
}

async function refreshCharts() {
  if (state.over) return;
  const base = `/v1/variants/${state.def.id}`;
  try {
    const value = await api("POST", `${base}/positions/value`, {
      options: state.options, scorecard: state.scorecard, histogram: true });
    drawFinal(value.distribution);
    if (state.bots.length) {
      const chances = await api("POST", `${base}/games/win-probability`, {
        options: state.options,
        players: [{ name: t("you"), scorecard: state.scorecard },
                  ...state.bots.map((b) => ({ name: b.name, scorecard: b.scorecard }))],
      });
      drawChances(chances.players);
    }
  } catch (err) {
    message(err.message);
  }
}

function translate() {
  document.documentElement.lang = state.lang;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  renderBotChoices();
  for (const bot of state.bots) bot.name = t("computer", { n: bot.n });
  if (state.def) {
    renderSheet();
    renderPlayers();
  }
}

// ------------------------------------------------------------------------------ wiring

async function start() {
  await loadVariants();
  renderOptions();
  renderBotChoices();
  await newGame();
  translate();
  document.body.dataset.ready = "true";
}

async function main() {
  $("api-key").value = apiKey();
  $("api-key").addEventListener("change", () => {
    sessionStorage.setItem(KEY_STORE, $("api-key").value.trim());
    start().catch((err) => message(err.message));
  });
  $("variant").addEventListener("change", () => { renderOptions(); newGame(); });
  $("options").addEventListener("change", () => newGame());
  $("bots").addEventListener("change", () => newGame());
  $("lang").addEventListener("change", () => { state.lang = $("lang").value; translate(); });
  $("new-game").addEventListener("click", () => newGame());
  $("roll").addEventListener("click", () => roll());
  $("set-dice").addEventListener("click", () => setDice());
  $("em-baixo").addEventListener("change", () => { if (state.throw) afterDice(); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && document.activeElement === $("typed")) setDice();
  });
  await start();
}

main().catch((err) => message(err.message));
