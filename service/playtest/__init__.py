"""The playtest lab: computer players on variants of the rules, and what their games say.

:mod:`.simulate` plays and adds up (pure, like the engine); :mod:`.compare`
plays two rule sets on the same deals and measures their difference (pure too);
:mod:`.runs` stores a run's figures for the dashboard; :mod:`.plots` draws them
as SVG; :mod:`.cli` is ``flask --app service playtest``. Importing the package loads
nothing else: what a run's worker processes import to play is the engine and the computer
players, no Flask and no database (started by the ``flask`` command, each also imports that
command's script, as the ``spawn`` start method does, which costs its start only).
"""
