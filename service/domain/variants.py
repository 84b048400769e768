"""Every variant as data: its boxes, bonuses, Joker rule and options (RULES.md §1-13).

A newcomer looking for "how is a full house scored in Generala" finds the row here; how a
pattern is evaluated lives in `boxes.py`, how Jokers and sheet order decide legality in
`scoring.py`. Options are small functions from a variant to a variant, so an option is an
addition of data, not a branch elsewhere.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from .boxes import Box

# --------------------------------------------------------------------------- labels

UPPER_IDS = ("ones", "twos", "threes", "fours", "fives", "sixes")

# Labels per box id in en, pt, es, de, sv, fr: the local games' own words. A variant may
# override some of them (the five-of-a-kind box is "YAHTZEE", "Kniffel", "General"...).
LABELS: dict[str, tuple[str, str, str, str, str, str]] = {
    "ones": ("Aces", "Jogada de 1", "Unos", "Einer", "Ettor", "As"),
    "twos": ("Twos", "Jogada de 2", "Doses", "Zweier", "Tvåor", "Deux"),
    "threes": ("Threes", "Jogada de 3", "Treses", "Dreier", "Treor", "Trois"),
    "fours": ("Fours", "Jogada de 4", "Cuatros", "Vierer", "Fyror", "Quatre"),
    "fives": ("Fives", "Jogada de 5", "Cincos", "Fünfer", "Femmor", "Cinq"),
    "sixes": ("Sixes", "Jogada de 6", "Seises", "Sechser", "Sexor", "Six"),
    "one_pair": ("One Pair", "Par", "Par", "Ein Paar", "Ett par", "Paire"),
    "two_pairs": ("Two Pairs", "Dois pares", "Doble par", "Zwei Paare", "Två par", "Double paire"),
    "three_pairs": ("Three Pairs", "Três pares", "Tres pares", "Drei Paare", "Tre par",
                    "Trois paires"),
    "three_of_a_kind": ("3 of a Kind", "Trinca", "Trío", "Dreierpasch", "Tretal", "Brelan"),
    "four_of_a_kind": ("4 of a Kind", "Quadra", "Póker", "Viererpasch", "Fyrtal", "Carré"),
    "five_of_a_kind": ("YAHTZEE", "General", "Generala", "Kniffel", "Yatzy", "Yam's"),
    "six_of_a_kind": ("Maxi Yatzy", "Maxi Yatzy", "Maxi Yatzy", "Maxi Yatzy", "Maxi Yatzy",
                      "Maxi Yatzy"),
    "double_five_of_a_kind": ("Double Generala", "General dobrado", "Doble Generala",
                              "Doppel-Kniffel", "Dubbel Yatzy", "Double Yam's"),
    "full_house": ("Full House", "Full-hand", "Full", "Full House", "Kåk", "Full"),
    "villa": ("Villa", "Duas trincas", "Dos tríos", "Zwei Drillinge", "Villa", "Deux brelans"),
    "tower": ("Tower", "Quadra e par", "Póker y par", "Vierling und Paar", "Torn",
              "Carré et paire"),
    "small_straight": ("Small Straight", "Sequência menor", "Escalera menor", "Kleine Straße",
                       "Liten stege", "Petite suite"),
    "large_straight": ("Large Straight", "Sequência maior", "Escalera mayor", "Große Straße",
                       "Stor stege", "Grande suite"),
    "full_straight": ("Full Straight", "Sequência completa", "Escalera completa",
                      "Volle Straße", "Full stege", "Suite complète"),
    "straight": ("Straight", "Sequência", "Escalera", "Straße", "Stege", "Suite"),
    "chance": ("Chance", "Jogada aleatória", "Libre", "Chance", "Chans", "Chance"),
}
LANGS = ("en", "pt", "es", "de", "sv", "fr")


def labels_for(box_id: str, **overrides: str) -> dict[str, str]:
    """The default labels of a box id, with some languages replaced."""
    labels = dict(zip(LANGS, LABELS[box_id]))
    labels.update(overrides)
    return labels


# --------------------------------------------------------------------------- box makers

RUN_LOW = (1, 2, 3, 4, 5)
RUN_HIGH = (2, 3, 4, 5, 6)
RUN_WRAP = (1, 3, 4, 5, 6)  # 3-4-5-6-1: the ace counted after the six
RUN_FULL = (1, 2, 3, 4, 5, 6)
RUNS_OF_FOUR = ((1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6))


def upper_boxes() -> tuple[Box, ...]:
    """Ones..Sixes: the sum of the dice showing that face."""
    return tuple(
        Box(id=bid, section="upper", pattern="face", scoring="matching", face=i + 1,
            labels=labels_for(bid))
        for i, bid in enumerate(UPPER_IDS)
    )


def kind(box_id: str, n: int, scoring: str, value: int = 0, **kw: Any) -> Box:
    """At least n dice of one face."""
    labels = kw.pop("labels", labels_for(box_id))
    return Box(id=box_id, section="lower", pattern="n_kind", n=n, scoring=scoring, value=value,
               labels=labels, **kw)


def pairs(box_id: str, n: int) -> Box:
    """n pairs of different faces, scoring the paired dice."""
    return Box(id=box_id, section="lower", pattern="pairs", n=n, scoring="matching",
               labels=labels_for(box_id))


def groups(box_id: str, sizes: tuple[int, ...], scoring: str, value: int = 0, **kw: Any) -> Box:
    """Groups of the given sizes on different faces (3+2 full house, 3+3 villa, 4+2 tower)."""
    labels = kw.pop("labels", labels_for(box_id))
    return Box(id=box_id, section="lower", pattern="groups", groups=sizes, scoring=scoring,
               value=value, labels=labels, **kw)


def straight(box_id: str, runs: tuple[tuple[int, ...], ...], value: int, **kw: Any) -> Box:
    """One of the runs of faces, for a fixed value."""
    labels = kw.pop("labels", labels_for(box_id))
    return Box(id=box_id, section="lower", pattern="straight", runs=runs, scoring="fixed",
               value=value, labels=labels, **kw)


def chance(**label_overrides: str) -> Box:
    """Any hand, the sum of all dice."""
    return Box(id="chance", section="lower", pattern="chance", scoring="sum",
               labels=labels_for("chance", **label_overrides))


# --------------------------------------------------------------------------- variant data


@dataclass(frozen=True)
class UpperBonus:
    """Points added when the upper section reaches a threshold (threshold itself included)."""

    threshold: int
    amount: int


#: Where a further five of a kind must be written to earn its bonus (`FiveOfAKindBonus`).
BONUS_PLACEMENTS = ("any", "matching_upper")


@dataclass(frozen=True)
class FiveOfAKindBonus:
    """Extra points for a further five of a kind (YAHTZEE bonus, extra Kniffel).

    `needs_made_box`: only when the five-of-a-kind box holds its score (50 on the standard
    sheet; whatever a house rule makes it), not a scratch.
    `placement`: "any" (wherever the roll is placed) or "matching_upper" (only when it goes
    into the number box of its face, Kniffel).
    """

    amount: int
    needs_made_box: bool
    placement: str


def texts(*six: str) -> dict[str, str]:
    """One text per language, given in the order of LANGS (en, pt, es, de, sv, fr)."""
    assert len(six) == len(LANGS)
    return dict(zip(LANGS, six))


def everywhere(text: str) -> dict[str, str]:
    """A name that is the same in every language (a game's own name)."""
    return dict.fromkeys(LANGS, text)


#: The names of a boolean option's two values.
OFF_ON = (texts("Off", "Não", "No", "Aus", "Av", "Non"),
          texts("On", "Sim", "Sí", "An", "På", "Oui"))


@dataclass(frozen=True)
class OptionSpec:
    """A rule option a client may set per request, with what a person reads of it in each
    language: its name (`labels`), each value's name (`choice_labels`, in the order of
    `choices`) and what it changes (`descriptions`)."""

    name: str
    choices: tuple[Any, ...]  # (False, True) for a boolean option
    default: Any
    descriptions: dict[str, str] = field(compare=False, hash=False)
    labels: dict[str, str] = field(compare=False, hash=False)
    choice_labels: tuple[dict[str, str], ...] = field(default=OFF_ON, compare=False,
                                                      hash=False)

    @property
    def is_bool(self) -> bool:
        """Whether the option is a plain on/off switch."""
        return self.choices == (False, True)

    @property
    def description(self) -> str:
        """What the option changes, in English."""
        return self.descriptions["en"]


COLUMN_ORDERS = ("down", "up", "free", "first_throw")


@dataclass(frozen=True)
class Variant:
    """A whole game: sheet, dice, throws, bonuses, Joker rule, options."""

    id: str
    name: str
    description: str
    dice: int
    throws: int
    boxes: tuple[Box, ...]
    upper_bonus: UpperBonus | None = None
    five_of_a_kind_bonus: FiveOfAKindBonus | None = None
    joker: str = "none"  # "forced" | "free" | "none"
    order: str = "free"  # "free" | "down": the order boxes must be filled in
    columns: tuple[str, ...] = ()  # column order rules when played on a column sheet
    saved_throws: bool = False  # unused throws carry over to later turns (Maxi Yatzy)
    em_baixo: bool = False  # the player may score the bottom faces (Bozó)
    options: tuple[OptionSpec, ...] = ()
    sources: tuple[str, ...] = ()
    #: the game's name in each language (en, pt, es, de, sv, fr)
    labels: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def box(self, box_id: str) -> Box | None:
        """The box with this id, or None when the sheet has none."""
        for b in self.boxes:
            if b.id == box_id:
                return b
        return None

    @cached_property
    def box_ids(self) -> tuple[str, ...]:
        """Box ids in sheet order."""
        return tuple(b.id for b in self.boxes)

    def blank_boxes(self) -> dict[str, int | None]:
        """A column's boxes with every box open (a new dict, box id -> None, sheet order)."""
        return self._blank_boxes.copy()

    @cached_property
    def _blank_boxes(self) -> dict[str, int | None]:
        """What `blank_boxes` copies (a copy of a dict costs a sixth of building one)."""
        return dict.fromkeys(self.box_ids)

    @cached_property
    def upper_ids(self) -> tuple[str, ...]:
        """The upper section's box ids, in sheet order (what the upper bonus counts)."""
        return tuple(b.id for b in self.boxes if b.section == "upper")

    @cached_property
    def in_upper(self) -> tuple[bool, ...]:
        """Per box, in sheet order, whether it is in the upper section."""
        return tuple(b.section == "upper" for b in self.boxes)

    @cached_property
    def box_requires(self) -> tuple[tuple[str, ...], ...]:
        """Per box, in sheet order, the boxes it needs made first (Doble Generala's)."""
        return tuple(tuple(b.requires) for b in self.boxes)

    @cached_property
    def has_requires(self) -> bool:
        """Whether some box needs another box made first (Doble Generala)."""
        return any(b.requires for b in self.boxes)

    @cached_property
    def lower_ids(self) -> tuple[str, ...]:
        """The lower section's box ids, in sheet order."""
        return tuple(b.id for b in self.boxes if b.section == "lower")

    @property
    def turns(self) -> int:
        """One box per turn: as many turns as boxes, times the columns."""
        return len(self.boxes) * max(1, len(self.columns))

    def option(self, name: str) -> OptionSpec | None:
        """The option spec with this name, or None."""
        for o in self.options:
            if o.name == name:
                return o
        return None

    def with_boxes(self, boxes: tuple[Box, ...]) -> Variant:
        """A copy with another sheet."""
        return replace(self, boxes=boxes)

    def replace_box(self, box_id: str, **changes: Any) -> Variant:
        """A copy with one box's fields changed."""
        return self.with_boxes(tuple(b.with_changes(**changes) if b.id == box_id else b
                                     for b in self.boxes))


# --------------------------------------------------------------------------- options

OPT_COLUMNS = OptionSpec(
    "columns", (False, True), False, texts(
        "52 rounds: 4 columns of the same boxes, filled top to bottom, bottom to top, in any "
        "order, and with first-throw results only (the Brazilian General sheet).",
        "52 rodadas: 4 colunas das mesmas casas, preenchidas de cima para baixo, de baixo "
        "para cima, em qualquer ordem e só com resultados do primeiro lance.",
        "52 rondas: 4 columnas de las mismas casillas, que se llenan de arriba abajo, de "
        "abajo arriba, en cualquier orden y solo con resultados del primer tiro.",
        "52 Runden: 4 Spalten mit denselben Feldern, gefüllt von oben nach unten, von unten "
        "nach oben, in beliebiger Reihenfolge und nur mit Ergebnissen des ersten Wurfs.",
        "52 rundor: 4 kolumner med samma rutor, som fylls uppifrån och ned, nedifrån och upp, "
        "i valfri ordning och bara med resultat från första kastet.",
        "52 tours : 4 colonnes des mêmes cases, remplies de haut en bas, de bas en haut, "
        "dans n'importe quel ordre, et seulement avec des résultats du premier lancer."),
    texts("Column sheet", "Tabela em colunas", "Planilla en columnas", "Spaltenblock",
          "Kolumnprotokoll", "Feuille en colonnes"))
OPT_JOKER = OptionSpec(
    "joker", ("forced", "free", "none"), "forced", texts(
        "Joker rule for a YAHTZEE thrown while the YAHTZEE box is filled: forced (Hasbro), "
        "free (any open box) or none.",
        "Regra do coringa para um YAHTZEE lançado com a casa YAHTZEE já preenchida: "
        "obrigatória (Hasbro), livre (qualquer casa aberta) ou nenhuma.",
        "Regla del comodín para un YAHTZEE tirado con la casilla YAHTZEE ya llena: "
        "obligatoria (Hasbro), libre (cualquier casilla abierta) o ninguna.",
        "Joker-Regel für einen YAHTZEE bei schon gefülltem YAHTZEE-Feld: erzwungen (Hasbro), "
        "frei (jedes offene Feld) oder keine.",
        "Jokerregel för en YAHTZEE som slås när YAHTZEE-rutan redan är ifylld: tvingad "
        "(Hasbro), fri (valfri öppen ruta) eller ingen.",
        "Règle du joker pour un YAHTZEE lancé quand la case YAHTZEE est déjà remplie : "
        "imposée (Hasbro), libre (toute case ouverte) ou aucune."),
    texts("Joker rule", "Regra do coringa", "Regla del comodín", "Joker-Regel", "Jokerregel",
          "Règle du joker"),
    (texts("Forced (Hasbro)", "Obrigatória (Hasbro)", "Obligatoria (Hasbro)",
           "Erzwungen (Hasbro)", "Tvingad (Hasbro)", "Imposée (Hasbro)"),
     texts("Free: any open box", "Livre: qualquer casa aberta",
           "Libre: cualquier casilla abierta", "Frei: jedes offene Feld",
           "Fri: valfri öppen ruta", "Libre : toute case ouverte"),
     texts("None", "Nenhuma", "Ninguna", "Keine", "Ingen", "Aucune")))
OPT_EXTRA_KNIFFEL_50 = OptionSpec(
    "extra_kniffel_needs_50", (False, True), True, texts(
        "The extra Kniffel's +50 only when the Kniffel box holds 50 (Schmidt's text says only "
        "'has an entry').",
        "O +50 do Kniffel extra só quando a casa Kniffel tem 50 (o texto da Schmidt diz "
        "apenas 'tem um registro').",
        "El +50 del Kniffel extra solo cuando la casilla Kniffel tiene 50 (el texto de "
        "Schmidt dice solo 'tiene una anotación').",
        "Die +50 für einen weiteren Kniffel nur, wenn im Kniffel-Feld 50 steht (Schmidts "
        "Text sagt nur „hat einen Eintrag“).",
        "Extra Kniffels +50 bara när Kniffel-rutan har 50 (Schmidts text säger bara "
        "'har en anteckning').",
        "Le +50 du Kniffel supplémentaire seulement quand la case Kniffel contient 50 (le "
        "texte de Schmidt dit seulement « a une inscription »)."),
    texts("Extra Kniffel needs 50", "Kniffel extra exige 50", "Kniffel extra exige 50",
          "Extra-Kniffel nur mit 50", "Extra Kniffel kräver 50",
          "Kniffel supplémentaire exige 50"))
OPT_TRINCA_QUADRA = OptionSpec(
    "trinca_quadra", ("sum", "fixed", "matching"), "sum", texts(
        "Trinca and Quadra score the sum of all dice, a fixed 20 and 30, or only the repeated "
        "dice.",
        "Trinca e Quadra valem a soma de todos os dados, 20 e 30 fixos, ou só os dados "
        "repetidos.",
        "Trío y Póker valen la suma de todos los dados, 20 y 30 fijos, o solo los dados "
        "repetidos.",
        "Dreier- und Viererpasch zählen die Summe aller Würfel, feste 20 und 30 oder nur die "
        "gleichen Würfel.",
        "Tretal och fyrtal ger summan av alla tärningar, fasta 20 och 30, eller bara de lika "
        "tärningarna.",
        "Le brelan et le carré valent la somme de tous les dés, 20 et 30 fixes, ou seulement "
        "les dés identiques."),
    texts("Trinca and Quadra score", "Pontos de Trinca e Quadra", "Puntos de Trío y Póker",
          "Wertung von Dreier- und Viererpasch", "Poäng för tretal och fyrtal",
          "Points du brelan et du carré"),
    (texts("Sum of all dice", "Soma de todos os dados", "Suma de todos los dados",
           "Summe aller Würfel", "Summan av alla tärningar", "Somme de tous les dés"),
     texts("Fixed: 20 and 30", "Fixos: 20 e 30", "Fijos: 20 y 30", "Fest: 20 und 30",
           "Fasta: 20 och 30", "Fixes : 20 et 30"),
     texts("Repeated dice only", "Só os dados repetidos", "Solo los dados repetidos",
           "Nur die gleichen Würfel", "Bara de lika tärningarna",
           "Seulement les dés identiques")))
OPT_GENERAL_DE_MAO = OptionSpec(
    "general_de_mao", (False, True), False, texts(
        "General de mão: five equal on the first throw scores 100 in the General box.",
        "General de mão: cinco iguais no primeiro lance valem 100 na casa General.",
        "General de mão: cinco iguales en el primer tiro valen 100 en la casilla General.",
        "General de mão: fünf Gleiche im ersten Wurf zählen 100 im Feld General.",
        "General de mão: fem lika i första kastet ger 100 i rutan General.",
        "General de mão : cinq dés identiques au premier lancer valent 100 dans la case "
        "General."),
    everywhere("General de mão (100)"))
OPT_ALEATORIA = OptionSpec(
    "aleatoria", (False, True), True, texts(
        "Whether the Jogada aleatória (X, chance) box exists.",
        "Se a casa Jogada aleatória (X) existe.",
        "Si existe la casilla Libre (X, jogada aleatória).",
        "Ob es das Feld Chance (X, Jogada aleatória) gibt.",
        "Om rutan Chans (X, jogada aleatória) finns.",
        "Si la case Chance (X, jogada aleatória) existe."),
    texts("Chance box (X)", "Casa Jogada aleatória (X)", "Casilla Libre (X)",
          "Feld Chance (X)", "Rutan Chans (X)", "Case Chance (X)"))
DOBLE_GENERALA_LABELS = texts("Double Generala", "Generala dobrada", "Doble Generala",
                              "Doppel-Generala", "Dubbel Generala", "Double Generala")
OPT_DOBLE_GENERALA = OptionSpec(
    "doble_generala", (False, True), True, texts(
        "Whether the Doble Generala box exists (a second Generala while the Generala box holds "
        "50).",
        "Se a casa Doble Generala existe (uma segunda Generala com 50 na casa Generala).",
        "Si existe la casilla Doble Generala (una segunda Generala con 50 en la casilla "
        "Generala).",
        "Ob es das Feld Doppel-Generala gibt (eine zweite Generala, wenn im Feld Generala 50 "
        "steht).",
        "Om rutan Dubbel Generala finns (en andra Generala när rutan Generala har 50).",
        "Si la case Double Generala existe (une deuxième Generala quand la case Generala "
        "contient 50)."),
    DOBLE_GENERALA_LABELS)
OPT_DOBLE_GENERALA_SPANISH = OptionSpec(
    "doble_generala", (False, True), False, texts(
        "Whether a Doble Generala box exists (200, a second Generala while the Generala box "
        "holds 100); the Spanish scale lists none.",
        "Se existe uma casa Doble Generala (200, uma segunda Generala com 100 na casa "
        "Generala); a escala espanhola não a tem.",
        "Si existe una casilla Doble Generala (200, una segunda Generala con 100 en la "
        "casilla Generala); la escala española no la tiene.",
        "Ob es ein Feld Doppel-Generala gibt (200, eine zweite Generala, wenn im Feld "
        "Generala 100 steht); die spanische Skala kennt keines.",
        "Om en ruta Dubbel Generala finns (200, en andra Generala när rutan Generala har "
        "100); den spanska skalan har ingen.",
        "Si une case Double Generala existe (200, une deuxième Generala quand la case "
        "Generala contient 100) ; l'échelle espagnole n'en a pas."),
    DOBLE_GENERALA_LABELS)
OPT_OBLIGADA = OptionSpec(
    "obligada", (False, True), False, texts(
        "Generala obligada: boxes are filled in sheet order.",
        "Generala obligada: as casas são preenchidas na ordem da tabela.",
        "Generala obligada: las casillas se llenan en el orden de la planilla.",
        "Generala obligada: die Felder werden in der Reihenfolge des Blocks gefüllt.",
        "Generala obligada: rutorna fylls i protokollets ordning.",
        "Generala obligada : les cases sont remplies dans l'ordre de la feuille."),
    texts("Obligada: in sheet order", "Obligada: na ordem da tabela",
          "Obligada: en el orden de la planilla", "Obligada: in Blockreihenfolge",
          "Obligada: i protokollets ordning", "Obligada : dans l'ordre de la feuille"))


def escalera_wraps_option(default: bool) -> OptionSpec:
    """Whether 3-4-5-6-1 counts as a straight (the ace after the six)."""
    return OptionSpec("escalera_wraps", (False, True), default, texts(
        "Whether 3-4-5-6-1 counts as a straight (the ace after the six).",
        "Se 3-4-5-6-1 conta como sequência (o ás depois do seis).",
        "Si 3-4-5-6-1 cuenta como escalera (el as después del seis).",
        "Ob 3-4-5-6-1 als Straße zählt (die Eins nach der Sechs).",
        "Om 3-4-5-6-1 räknas som stege (ettan efter sexan).",
        "Si 3-4-5-6-1 compte comme une suite (l'as après le six)."),
        texts("3-4-5-6-1 is a straight", "3-4-5-6-1 é sequência", "3-4-5-6-1 es escalera",
              "3-4-5-6-1 ist eine Straße", "3-4-5-6-1 är en stege",
              "3-4-5-6-1 est une suite"))


def _apply_columns(v: Variant, on: bool) -> Variant:
    return replace(v, columns=COLUMN_ORDERS if on else ())


def _apply_joker(v: Variant, mode: str) -> Variant:
    return replace(v, joker=mode)


def _apply_extra_kniffel_50(v: Variant, on: bool) -> Variant:
    assert v.five_of_a_kind_bonus is not None
    return replace(v, five_of_a_kind_bonus=replace(v.five_of_a_kind_bonus, needs_made_box=on))


def _apply_trinca_quadra(v: Variant, mode: str) -> Variant:
    if mode == "sum":
        return v
    if mode == "fixed":
        v = v.replace_box("three_of_a_kind", scoring="fixed", value=20)
        return v.replace_box("four_of_a_kind", scoring="fixed", value=30)
    v = v.replace_box("three_of_a_kind", scoring="matching")
    return v.replace_box("four_of_a_kind", scoring="matching")


def _apply_general_de_mao(v: Variant, on: bool) -> Variant:
    return v.replace_box("five_of_a_kind", first_throw_value=100) if on else v


def _drop_box(v: Variant, box_id: str) -> Variant:
    return v.with_boxes(tuple(b for b in v.boxes if b.id != box_id))


def _apply_aleatoria(v: Variant, on: bool) -> Variant:
    return v if on else _drop_box(v, "chance")


def _apply_doble(v: Variant, on: bool) -> Variant:
    return v if on else _drop_box(v, "double_five_of_a_kind")


def _apply_obligada(v: Variant, on: bool) -> Variant:
    return replace(v, order="down" if on else "free")


def _apply_wraps(v: Variant, on: bool) -> Variant:
    box = v.box("straight")
    assert box is not None
    runs = tuple(r for r in box.runs if r != RUN_WRAP) + ((RUN_WRAP,) if on else ())
    return v.replace_box("straight", runs=runs)


OPTION_APPLIERS: dict[str, Callable[[Variant, Any], Variant]] = {
    "columns": _apply_columns,
    "joker": _apply_joker,
    "extra_kniffel_needs_50": _apply_extra_kniffel_50,
    "trinca_quadra": _apply_trinca_quadra,
    "general_de_mao": _apply_general_de_mao,
    "aleatoria": _apply_aleatoria,
    "doble_generala": _apply_doble,
    "obligada": _apply_obligada,
    "escalera_wraps": _apply_wraps,
}


# --------------------------------------------------------------------------- the catalog


def _yahtzee_lower(five_label: dict[str, str], exact_straights: bool = False) -> tuple[Box, ...]:
    if exact_straights:
        small = straight("small_straight", (RUN_LOW,), 30)
        large = straight("large_straight", (RUN_HIGH,), 40)
    else:
        small = straight("small_straight", RUNS_OF_FOUR, 30)
        large = straight("large_straight", (RUN_LOW, RUN_HIGH), 40)
    return (
        kind("three_of_a_kind", 3, "sum"),
        kind("four_of_a_kind", 4, "sum"),
        groups("full_house", (3, 2), "fixed", 25),
        small,
        large,
        kind("five_of_a_kind", 5, "fixed", 50, labels=labels_for("five_of_a_kind", **five_label)),
        chance(),
    )


YAHTZEE_BOXES = upper_boxes() + _yahtzee_lower({})
HASBRO = "Hasbro YAHTZEE leaflet"
#: The rule documents the variants were taken from (docs/rules.md cites them as seeds).
GENERAL_PT = "'General (jogo)', Portuguese encyclopedia article"
ONLINE_PT = "'Yahtzee Online', Portuguese article"
GENERALA_ES = "'Generala', Spanish encyclopedia article"
REGRA_PT = "'Regra do General', Portuguese rule sheet"
GUIDE_PT = "'Contar os pontos do Yahtzee', Portuguese scoring guide"
YAHTZEE_UPPER_BONUS = UpperBonus(63, 35)

_YAHTZEE = Variant(
    id="yahtzee", name="YAHTZEE (Hasbro)",
    labels=everywhere("YAHTZEE (Hasbro)"),
    description="The US game: 13 boxes, +35 at 63 in the upper section, YAHTZEE bonus of "
                "100 per further YAHTZEE, Joker rules.",
    dice=5, throws=3, boxes=YAHTZEE_BOXES, upper_bonus=YAHTZEE_UPPER_BONUS,
    five_of_a_kind_bonus=FiveOfAKindBonus(100, needs_made_box=True, placement="any"),
    joker="forced",
    options=(OPT_JOKER, OPT_COLUMNS), sources=(HASBRO,))

_YAHTZEE_BASIC = Variant(
    id="yahtzee_basic", name="YAHTZEE, basic sheet",
    labels=texts("YAHTZEE, basic sheet", "YAHTZEE, tabela básica", "YAHTZEE, planilla básica",
                 "YAHTZEE, einfacher Block", "YAHTZEE, enkelt protokoll",
                 "YAHTZEE, feuille de base"),
    description="YAHTZEE boxes and upper bonus, without YAHTZEE bonus or Joker.",
    dice=5, throws=3, boxes=YAHTZEE_BOXES, upper_bonus=YAHTZEE_UPPER_BONUS,
    options=(OPT_COLUMNS,), sources=(GUIDE_PT,))

_KNIFFEL = Variant(
    id="kniffel", name="Kniffel (Schmidt)",
    labels=everywhere("Kniffel (Schmidt)"),
    description="The German game: YAHTZEE's sheet; an extra Kniffel scores +50 in its free "
                "number box, else it is a Joker for the lower section without bonus.",
    dice=5, throws=3,
    boxes=upper_boxes() + _yahtzee_lower({"en": "Kniffel", "pt": "Kniffel", "es": "Kniffel",
                                          "sv": "Kniffel", "fr": "Kniffel"}),
    upper_bonus=YAHTZEE_UPPER_BONUS,
    five_of_a_kind_bonus=FiveOfAKindBonus(50, needs_made_box=True, placement="matching_upper"),
    joker="forced",
    options=(OPT_EXTRA_KNIFFEL_50, OPT_COLUMNS), sources=("Schmidt Kniffel manual", GUIDE_PT))

_YAMS = Variant(
    id="yams", name="Yam's (France)",
    labels=texts("Yam's (France)", "Yam's (França)", "Yam's (Francia)", "Yam's (Frankreich)",
                 "Yam's (Frankrike)", "Yam's (France)"),
    description="The basic sheet with exact straights: Petite suite 1-2-3-4-5 (30), Grande "
                "suite 2-3-4-5-6 (40).",
    dice=5, throws=3,
    boxes=upper_boxes() + _yahtzee_lower({"en": "Yam's", "pt": "Yam", "es": "Yam's",
                                          "de": "Yam's", "sv": "Yam's"}, exact_straights=True),
    upper_bonus=YAHTZEE_UPPER_BONUS, options=(OPT_COLUMNS,),
    sources=("French Yam's rule pages", GUIDE_PT))

_YATZY = Variant(
    id="yatzy", name="Yatzy (Scandinavian)",
    labels=texts("Yatzy (Scandinavian)", "Yatzy (escandinavo)", "Yatzy (escandinavo)",
                 "Yatzy (skandinavisch)", "Yatzy (skandinaviskt)", "Yatzy (scandinave)"),
    description="15 boxes with pairs; sets score only the matching dice; +50 at 63.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        pairs("one_pair", 1),
        pairs("two_pairs", 2),
        kind("three_of_a_kind", 3, "matching"),
        kind("four_of_a_kind", 4, "matching"),
        straight("small_straight", (RUN_LOW,), 15),
        straight("large_straight", (RUN_HIGH,), 20),
        groups("full_house", (3, 2), "matching"),
        chance(),
        kind("five_of_a_kind", 5, "fixed", 50,
             labels=labels_for("five_of_a_kind", en="Yatzy", pt="Yatzy", es="Yatzy",
                               de="Yatzy", fr="Yatzy")),
    ),
    upper_bonus=UpperBonus(63, 50), sources=("Scandinavian Yatzy rules", GUIDE_PT))

_MAXI = Variant(
    id="maxi_yatzy", name="Maxi Yatzy (6 dice)",
    labels=texts("Maxi Yatzy (6 dice)", "Maxi Yatzy (6 dados)", "Maxi Yatzy (6 dados)",
                 "Maxi Yatzy (6 Würfel)", "Maxi Yatzy (6 tärningar)", "Maxi Yatzy (6 dés)"),
    description="Six dice, 20 boxes, +100 at 84; throws not used in a turn are saved.",
    dice=6, throws=3,
    boxes=upper_boxes() + (
        pairs("one_pair", 1),
        pairs("two_pairs", 2),
        pairs("three_pairs", 3),
        kind("three_of_a_kind", 3, "matching"),
        kind("four_of_a_kind", 4, "matching"),
        kind("five_of_a_kind", 5, "matching",
             labels=labels_for("five_of_a_kind", en="5 of a Kind", pt="Cinco iguais",
                               es="Cinco iguales", de="Fünferpasch", sv="Femtal",
                               fr="Cinq identiques")),
        straight("small_straight", (RUN_LOW,), 15),
        straight("large_straight", (RUN_HIGH,), 20),
        straight("full_straight", (RUN_FULL,), 21),
        groups("full_house", (3, 2), "matching"),
        groups("villa", (3, 3), "matching"),
        groups("tower", (4, 2), "matching"),
        chance(),
        kind("six_of_a_kind", 6, "fixed", 100),
    ),
    upper_bonus=UpperBonus(84, 100), saved_throws=True,
    sources=("maxiyatzy.com", f"{GENERAL_PT} (as 'Super Yatzy')"))

_GENERAL = Variant(
    id="general", name="General (Brasil, 13 jogadas)",
    labels=texts("General (Brazil, 13 boxes)", "General (Brasil, 13 jogadas)",
                 "General (Brasil, 13 casillas)", "General (Brasilien, 13 Felder)",
                 "General (Brasilien, 13 rutor)", "General (Brésil, 13 cases)"),
    description="Brazilian General: Trinca and Quadra sum, Full-hand 25, Seqüência alta 30, "
                "Seqüência baixa 40, General 50, Jogada aleatória; no upper bonus.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        kind("three_of_a_kind", 3, "sum"),
        kind("four_of_a_kind", 4, "sum"),
        groups("full_house", (3, 2), "fixed", 25),
        straight("large_straight", (RUN_HIGH,), 30,
                 labels=labels_for("large_straight", pt="Seqüência alta (S+)")),
        straight("small_straight", (RUN_LOW,), 40,
                 labels=labels_for("small_straight", pt="Seqüência baixa (S-)")),
        kind("five_of_a_kind", 5, "fixed", 50,
             labels=labels_for("five_of_a_kind", en="General", es="General", de="General",
                               sv="General", fr="General")),
        chance(en="Chance (X)", pt="Jogada aleatória (X)"),
    ),
    options=(OPT_TRINCA_QUADRA, OPT_GENERAL_DE_MAO, OPT_ALEATORIA, OPT_COLUMNS),
    sources=(GENERAL_PT, ONLINE_PT))

_GENERAL_LABELS = labels_for("five_of_a_kind", en="General", es="General", de="General",
                             sv="General", fr="General")
_GENERAL_11 = Variant(
    id="general_11", name="Regra do General (11 jogadas)",
    labels=texts("Regra do General (11 boxes)", "Regra do General (11 jogadas)",
                 "Regra do General (11 casillas)", "Regra do General (11 Felder)",
                 "Regra do General (11 rutor)", "Regra do General (11 cases)"),
    description="11 boxes: Sequência 20, Full-hand 30, Quadra 40 (+5 on the first throw), "
                "General 50, Jogada aleatória.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        straight("straight", (RUN_LOW, RUN_HIGH), 20, first_throw_bonus=5),
        groups("full_house", (3, 2), "fixed", 30, first_throw_bonus=5),
        kind("four_of_a_kind", 4, "fixed", 40, first_throw_bonus=5),
        kind("five_of_a_kind", 5, "fixed", 50, labels=_GENERAL_LABELS),
        chance(en="Chance (X)", pt="Jogada aleatória (X)"),
    ),
    options=(escalera_wraps_option(False),), sources=(REGRA_PT,))

_GENERALA_FIVE = labels_for("five_of_a_kind", en="Generala", pt="Generala", de="Generala",
                            sv="Generala", fr="Generala")
_GENERALA = Variant(
    id="generala", name="Generala (Argentina)",
    labels=texts("Generala (Argentina)", "Generala (Argentina)", "Generala (Argentina)",
                 "Generala (Argentinien)", "Generala (Argentina)", "Generala (Argentine)"),
    description="Escalera 20, Full 30, Póker 40 (+5 servida), Generala 50, Doble Generala "
                "100; a Generala servida wins the game.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        straight("straight", (RUN_LOW, RUN_HIGH, RUN_WRAP), 20, first_throw_bonus=5),
        groups("full_house", (3, 2), "fixed", 30, first_throw_bonus=5),
        kind("four_of_a_kind", 4, "fixed", 40, first_throw_bonus=5),
        kind("five_of_a_kind", 5, "fixed", 50, wins_on_first_throw=True, labels=_GENERALA_FIVE),
        kind("double_five_of_a_kind", 5, "fixed", 100, requires=("five_of_a_kind",)),
    ),
    options=(escalera_wraps_option(True), OPT_DOBLE_GENERALA, OPT_OBLIGADA),
    sources=(GENERALA_ES, "Argentine Generala reglamentos"))

_GENERALA_SPANISH = Variant(
    id="generala_spanish", name="Generala (escala espanhola)",
    labels=texts("Generala (Spanish scale)", "Generala (escala espanhola)",
                 "Generala (escala española)", "Generala (spanische Skala)",
                 "Generala (spansk skala)", "Generala (échelle espagnole)"),
    description="Escalera 40, Full 60, Póker 70 (80 with four aces), Generala 100; no "
                "servida bonus.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        straight("straight", (RUN_LOW, RUN_HIGH, RUN_WRAP), 40),
        groups("full_house", (3, 2), "fixed", 60),
        kind("four_of_a_kind", 4, "fixed", 70, value_by_face=((1, 80),)),
        kind("five_of_a_kind", 5, "fixed", 100, wins_on_first_throw=True,
             labels=_GENERALA_FIVE),
        kind("double_five_of_a_kind", 5, "fixed", 200, requires=("five_of_a_kind",)),
    ),
    options=(escalera_wraps_option(True), OPT_DOBLE_GENERALA_SPANISH, OPT_OBLIGADA),
    sources=(GENERAL_PT,))

_BOZO_FIVE = labels_for("five_of_a_kind", en="General", pt="General", es="General",
                        de="General", sv="General", fr="General")
_BOZO = Variant(
    id="bozo", name="Bozó (Centro-Oeste do Brasil)",
    labels=texts("Bozó (Central-West Brazil)", "Bozó (Centro-Oeste do Brasil)",
                 "Bozó (Centro-Oeste de Brasil)", "Bozó (Mittelwesten Brasiliens)",
                 "Bozó (mellanvästra Brasilien)", "Bozó (Centre-Ouest du Brésil)"),
    description="Full 10, Sequência 20, Quadra 30 (+5 de boca), General 40; General de boca "
                "wins the game; 'em baixo' scores the faces turned to the table.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        groups("full_house", (3, 2), "fixed", 10, first_throw_bonus=5),
        straight("straight", (RUN_LOW, RUN_HIGH), 20, first_throw_bonus=5),
        kind("four_of_a_kind", 4, "fixed", 30, first_throw_bonus=5),
        kind("five_of_a_kind", 5, "fixed", 40, wins_on_first_throw=True, labels=_BOZO_FIVE),
    ),
    em_baixo=True, options=(escalera_wraps_option(False),), sources=(GENERAL_PT,))

_YACHT = Variant(
    id="yacht", name="Yacht",
    labels=everywhere("Yacht"),
    description="The ancestor game: 12 boxes, Full House scores the sum, both straights 30, "
                "Yacht 50, no bonus.",
    dice=5, throws=3,
    boxes=upper_boxes() + (
        groups("full_house", (3, 2), "sum"),
        kind("four_of_a_kind", 4, "matching"),
        straight("small_straight", (RUN_LOW,), 30,
                 labels=labels_for("small_straight", en="Little Straight")),
        straight("large_straight", (RUN_HIGH,), 30,
                 labels=labels_for("large_straight", en="Big Straight")),
        chance(en="Choice"),
        kind("five_of_a_kind", 5, "fixed", 50,
             labels=labels_for("five_of_a_kind", en="Yacht", pt="Yacht", es="Yacht",
                               de="Yacht", sv="Yacht", fr="Yacht")),
    ),
    sources=("exercism yacht",))

VARIANTS: dict[str, Variant] = {
    v.id: v for v in (_YAHTZEE, _YAHTZEE_BASIC, _KNIFFEL, _YAMS, _YATZY, _MAXI, _GENERAL,
                      _GENERAL_11, _GENERALA, _GENERALA_SPANISH, _BOZO, _YACHT)
}
VARIANT_IDS = tuple(VARIANTS)
ALL_BOX_IDS: tuple[str, ...] = tuple(dict.fromkeys(b.id for v in VARIANTS.values()
                                                   for b in v.boxes))
ALL_OPTION_NAMES: tuple[str, ...] = tuple(OPTION_APPLIERS)


# --------------------------------------------------------------------------- names people write
def _folded(text: str) -> str:
    """A name as compared for "did you mean": no accents, case or punctuation."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(c for c in plain.casefold() if c.isalnum())


def _closest(value: object, names: dict[str, str]) -> str | None:
    """The id a mistyped `value` most likely means: the id of the name (an id, or a label
    in one of the six languages) it is once folded, or is close to."""
    if not isinstance(value, str) or not value:
        return None
    key = _folded(value)
    found = names.get(key)
    if found is None:
        close = difflib.get_close_matches(key, names, 1, 0.8)
        found = names[close[0]] if close else None
    return found if found != value else None


def unknown_box(variant: Variant, value: object) -> str:
    """What an unknown box id is told: the sheet's own box ids, and the one it likely means
    (an id or a label of one of the sheet's boxes, in any of the six languages, or close
    to one)."""
    names: dict[str, str] = {}
    for box in variant.boxes:
        for label in (box.id, *box.labels.values(), *labels_for(box.id).values()):
            names.setdefault(_folded(label), box.id)
    text = (f"variant {variant.id!r} has no box {value!r} (its boxes: "
            f"{', '.join(variant.box_ids)})")
    guess = _closest(value, names)
    return text + (f"; did you mean {guess!r}?" if guess else "")


def unknown_variant(value: object) -> str:
    """What an unknown variant id is told: the ids, and the one it likely means (an id or a
    variant's name, or close to one)."""
    names: dict[str, str] = {}
    for v in VARIANTS.values():
        for name in (v.id, v.name):
            names.setdefault(_folded(name), v.id)
    text = f"No variant {value!r}; known: {', '.join(VARIANT_IDS)}"
    guess = _closest(value, names)
    return text + (f". Did you mean {guess!r}?" if guess else "")
