// The playground: a whole game played in the browser through the service's public API only
// (GET /v1/variants, POST rules, hands/score, moves/suggest, games/turn, and scorecards/score
// for a new sheet's totals). No build step, no library, nothing from another host.
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

const $ = (id) => document.getElementById(id);
const state = {
  variants: [], def: null, lang: "en", options: {}, scorecard: null,
  dice: [], kept: [], throw: 0, turn: 1, totals: null, over: false,
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
  $("em-baixo-wrap").hidden = !state.def.em_baixo;
  $("game-over").hidden = true;
  startTurn();
  await refreshTotals();
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
  $("placements").innerHTML = "";
  $("advice").innerHTML = "";
  if (played.game_over) {
    state.over = true;
    const over = $("game-over");
    over.hidden = false;
    over.textContent = t(played.won ? "won" : "gameOver", { total: played.totals.total });
    render();
    return;
  }
  state.turn = played.turn + 1;
  startTurn();
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
  $("roll").disabled = state.over || !state.def || state.throw >= maxThrow();
  $("set-dice").disabled = state.over;
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

function translate() {
  document.documentElement.lang = state.lang;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  if (state.def) renderSheet();
}

// ------------------------------------------------------------------------------ wiring

async function start() {
  await loadVariants();
  renderOptions();
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
