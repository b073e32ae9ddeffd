"""The playtest lab: computer players on variants of the rules, and what their games say.

:mod:`.simulate` plays and adds up (pure, like the engine); :mod:`.compare`
plays two rule sets on the same deals and measures their difference (pure too);
:mod:`.runs` stores a run's figures for the dashboard; :mod:`.plots` draws them
as SVG; :mod:`.cli` is ``flask --app service playtest``. Importing the package loads
nothing else, so the worker processes of a run never load Flask.
"""
