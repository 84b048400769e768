"""Analysis on top of the advice: the `Analyst` (position values, distributions, coaching,
win probability: `analyst`), analyses of recorded games (`games`), a position's turn in two
moments (`turn_view`) and games of the advisor's own play from a position (`simulate`)."""
