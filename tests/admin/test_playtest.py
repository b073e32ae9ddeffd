"""The playtest page: finished games and stored runs side by side, with plots drawn as SVG."""

from __future__ import annotations

import re

from service import games
from service.models import Game, PlaytestRun, db
from service.playtest.runs import save_run
from service.playtest.simulate import Settings, figures, players_digest, simulate
from service.rules import Variant
from service.security import CSP
from service.unit_of_work import transaction

from .conftest import play
from .test_games import new_game
from .test_stats import table


def store_run(
    app, games: int = 5, seed: int = 1, keeper: str = "easy", shadow: str = "random", **options: str
) -> int:
    settings = Settings(
        games=games,
        keeper=keeper,
        shadow=shadow,
        variant=Variant.from_options(options),
        seed=seed,
    )
    with app.app_context(), transaction():
        return save_run(settings, figures(settings, simulate(settings))).id


def test_strangers_are_sent_to_sign_in(client) -> None:
    response = client.get("/admin/playtest")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/admin/login")


def test_the_page_shows_games_and_runs_with_plots(app, admin) -> None:
    over = new_game(app, "ann@example.com", "bob@example.com", seed=2)
    state = play(app, over, seed=3)
    first = store_run(app, halfway="6")
    second = store_run(app, games=7, seed=4)
    response = admin.get("/admin/playtest")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CSP
    html = response.get_data(as_text=True)
    assert 'href="/admin/playtest" aria-current="page">Playtest</a>' in html
    rows = table(html, "sources")
    assert [row[0] for row in rows] == [
        "games between people",
        f"run {second}: easy (Keeper) v random (Shadow), printed rules, seed 4",
        f"run {first}: easy (Keeper) v random (Shadow), halfway=6, seed 1",
    ]
    people = rows[0]
    assert people[1] == "1"
    assert people[2] == ("100.0%" if state["winner"] == "keeper" else "0.0%")
    assert people[-4:-2] == ["—", "—"]
    assert people[-1] == "—"
    assert rows[2][1] == "5"
    # Each run names the computer players that played it, by the start of their digest.
    digest = players_digest()
    assert [row[-1] for row in rows[1:]] == [digest[:12], digest[:12]]
    assert f'<code title="{digest}">{digest[:12]}</code>' in html
    # One plot of win rates with a dot for every source with games, a final-track plot for each.
    svgs = re.findall(r"<svg .*?</svg>", html, re.S)
    assert len(svgs) == 4
    assert svgs[0].count('class="rate"') == 3
    assert svgs[0].count('class="interval"') == 3
    assert all("<title>" in svg and 'role="img"' in svg for svg in svgs)
    assert svgs[1].count('class="bar"') == 11
    assert f"track {state['track']}: 1 games (100.0%)" in svgs[1]


def test_a_run_of_a_long_variant_is_named_by_every_rule_it_changed(app, admin) -> None:
    """The stored label is cut short; the page names the run from its settings."""
    sizes = ",".join(["0"] * 100)
    run = store_run(app, games=2, exchange_sizes=sizes, track_length="999")
    with app.app_context():
        assert db.session.get_one(PlaytestRun, run).variant.endswith("…")
    label = table(admin.get("/admin/playtest").get_data(as_text=True), "sources")[1][0]
    assert label == (
        f"run {run}: easy (Keeper) v random (Shadow), "
        f"exchange_sizes={sizes} track_length=999 rounds=100, seed 1"
    )


def test_a_run_stored_without_its_players_digest_shows_none(app, admin) -> None:
    run_id = store_run(app)
    with app.app_context(), transaction():
        run = db.session.get(PlaytestRun, run_id)
        assert run is not None
        run.settings = {key: value for key, value in run.settings.items() if key != "players"}
    rows = table(admin.get("/admin/playtest").get_data(as_text=True), "sources")
    assert rows[-1][0].startswith(f"run {run_id}:") and rows[-1][-1] == "—"


def test_the_page_says_how_many_runs_it_leaves_out(app, admin, monkeypatch) -> None:
    from service.admin import playtest

    stored = [store_run(app, games=2, seed=seed) for seed in range(3)]
    assert 'id="older-runs"' not in admin.get("/admin/playtest").get_data(as_text=True)
    monkeypatch.setattr(playtest, "LATEST", 2)
    html = admin.get("/admin/playtest").get_data(as_text=True)
    assert "The table lists the 2 latest of the 3 runs stored" in html
    assert "The final-track plots below are of the 8 latest runs" not in html
    assert [row[0].split(":")[0] for row in table(html, "sources")[1:]] == [
        f"run {run}" for run in stored[:0:-1]
    ]


def test_without_runs_the_page_says_so(app, admin) -> None:
    html = admin.get("/admin/playtest").get_data(as_text=True)
    assert 'id="no-runs"' in html
    assert table(html, "sources")[0][:3] == ["games between people", "0", "—"]


def test_games_against_the_computer_are_left_out(app, admin) -> None:
    """They measure people against the computer, not the rules: not in the balance figures."""
    play(app, new_game(app, "ann@example.com", "bob@example.com", seed=2), seed=2)
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("ann@example.com", "Ann"), games.Seating.the_computer("easy")
        )
        against_computer = game.id
    play(app, against_computer, seed=4)
    html = admin.get("/admin/playtest").get_data(as_text=True)
    rows = table(html, "sources")
    assert [(row[0], row[1]) for row in rows] == [("games between people", "1")]
    plot = re.search(r'<div class="scroll" id="win-rates">(.*?)</div>', html, re.S)
    assert plot and plot.group(1).count('class="rate"') == 1
    assert "against the computer" not in plot.group(1)
    assert 'href="/admin/stats#computer"' in html


def test_the_page_says_resigned_games_are_not_counted(app, admin) -> None:
    """A resignation ends a game before its track or rounds do: like a forfeit, it says
    nothing of the rules' balance, and the page names it among the games left out."""
    game_id = new_game(app, "ann@example.com", "bob@example.com", seed=2)
    with app.app_context(), transaction():
        game = db.session.get(Game, game_id)
        assert game is not None
        keeper = game.player("keeper")
        games.resign(keeper.id, game.version)
    html = admin.get("/admin/playtest").get_data(as_text=True)
    assert table(html, "sources")[0][:2] == ["games between people", "0"]
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert (
        "Games ended by a forfeit, a resignation, a timeout or a cancellation are not counted."
        in text
    )


def test_a_run_whose_rules_the_code_no_longer_reads_is_still_listed(app, admin) -> None:
    """A run stored by other code, with a parameter this code does not know or a value it
    now refuses, is named by its stored settings; the page still shows every run."""
    run_id = store_run(app)
    with app.app_context(), transaction():
        run = db.session.get_one(PlaytestRun, run_id)
        run.settings = {**run.settings, "variant": {"rounds": "2000", "elixirs": "3"}}
    page = admin.get("/admin/playtest")
    assert page.status_code == 200
    rows = table(page.get_data(as_text=True), "sources")
    assert rows[-1][0] == (
        f"run {run_id}: easy (Keeper) v random (Shadow), elixirs=3 rounds=2000, seed 1"
    )


def test_the_page_says_which_runs_pit_two_levels_against_each_other(app, admin) -> None:
    store_run(app, games=2, keeper="easy", shadow="easy")
    assert 'id="two-levels"' not in admin.get("/admin/playtest").get_data(as_text=True)
    store_run(app, games=2)
    store_run(app, games=2, keeper="random", shadow="easy")
    html = admin.get("/admin/playtest").get_data(as_text=True)
    found = re.search(r'<p id="two-levels"[^>]*>(.*?)</p>', html, re.S)
    assert found, html
    assert " ".join(found.group(1).split()) == (
        "2 of the runs listed have a different level in each seat: their Keeper's win rate "
        "measures the two levels as much as the rules, and does not say how balanced the "
        "rules are."
    )
