"""The rule examples and bad input, through ``python -m service.replay``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from service.rules import DECK

from .helpers import deal, examples_dir, random_game, replay, replay_json

EXAMPLE_NAMES = sorted(path.name for path in examples_dir().glob("*.json")) or ["(none found)"]

DEAL = deal(
    "1H 2H 3H 4H 5H 6H 7H 1D 2D 3D",
    "4D 5D 6D 7D 1C 2C 3C 4C 5C 6C",
)


def normalised(output: dict[str, Any]) -> dict[str, Any]:
    """The replay output with hands sorted: docs/rules.md lets them come in any order."""
    if "hands" not in output:
        return output
    return {**output, "hands": {seat: sorted(cards) for seat, cards in output["hands"].items()}}


def run_example(path: Path, how: str, tmp_path: Path) -> tuple[int, str, str]:
    example = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(example["scenario"])
    if how == "stdin":
        result = replay(["-"], text)
    elif how == "file":
        scenario_file = tmp_path / "scenario.json"
        scenario_file.write_text(text, encoding="utf-8")
        result = replay([str(scenario_file)])
    else:
        result = replay([str(path)])
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("how", ["stdin", "file", "example-file"])
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_through_the_command(examples: Path, name: str, how: str, tmp_path: Path) -> None:
    path = examples / name
    example = json.loads(path.read_text(encoding="utf-8"))
    status, stdout, stderr = run_example(path, how, tmp_path)
    assert status == example["exit"], stderr
    assert "Traceback" not in stderr
    output = json.loads(stdout)
    if example["exit"] == 0:
        assert normalised(output) == normalised(example["expected"])
    else:
        assert set(output) == {"error"}
        assert set(output["error"]) == {"index", "message"}
        assert output["error"]["index"] == example["expected"]["error"]["index"]
        assert isinstance(output["error"]["message"], str) and output["error"]["message"].strip()


def test_examples_directory_can_be_moved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SPLITMIND_RULES_DIR", str(tmp_path))
    assert examples_dir() == tmp_path / "examples"


def test_refused_action_message_is_the_rule(examples: Path) -> None:
    example = json.loads((examples / "04-illegal-elixir-answer.json").read_text())
    result = replay_json(example["scenario"])
    assert result.returncode == 1
    message = json.loads(result.stdout)["error"]["message"]
    assert "Clubs were named" in message and "elixir may not answer" in message


def round_one_without_a_seed() -> dict[str, Any]:
    """One deal, no seed, and actions that finish round 1, so round 2 needs a deal."""
    second = deal("1C 2C 3C 4C 5C 6C 7C 2S 3S 4S", "1H 2H 3H 4H 5H 6H 7H 1D 2D 3D")
    _, actions = random_game(11, deals=[DEAL, second], stop_at_round=2)
    return {"deals": [DEAL], "actions": actions}


def replaced(cards: list[str], old: str, new: str) -> list[str]:
    return [new if card == old else card for card in cards]


BAD_SCENARIOS: dict[str, object] = {
    "unknown card in a deal": {
        "deals": [{**DEAL, "keeper": replaced(DEAL["keeper"], "1H", "8H")}],
        "actions": [],
    },
    "unknown card in an exchange": {
        "deals": [DEAL],
        "actions": [{"seat": "keeper", "exchange": ["9X"]}],
    },
    "unknown card in a play": {
        "deals": [DEAL],
        "actions": [
            {"seat": "keeper", "exchange": ["1H"]},
            {"seat": "shadow", "exchange": ["4D"]},
            {"seat": "keeper", "play": "1S"},
        ],
    },
    "unknown card after a refused action": {
        "deals": [DEAL],
        "actions": [
            {"seat": "keeper", "play": "1H"},
            {"seat": "keeper", "exchange": ["9X"]},
        ],
    },
    "an action with no seat after a refused action": {
        "deals": [DEAL],
        "actions": [{"seat": "keeper", "play": "1H"}, {"exchange": ["1H"]}],
    },
    "duplicate card in a deal": {
        "deals": [{**DEAL, "keeper": replaced(DEAL["keeper"], "1H", "2H")}],
        "actions": [],
    },
    "eleven and nine cards": {
        "deals": [
            {**DEAL, "keeper": [*DEAL["keeper"], "4D"], "shadow": DEAL["shadow"][1:]},
        ],
        "actions": [],
    },
    "short aside": {
        "deals": [{**DEAL, "aside": DEAL["aside"][:4]}],
        "actions": [],
    },
    "a deal without an aside": {
        "deals": [{"keeper": DEAL["keeper"], "shadow": DEAL["shadow"]}],
        "actions": [],
    },
    "no deals and no seed": {"actions": []},
    "empty deals and no seed": {"deals": [], "actions": []},
    "an action with no seat": {"deals": [DEAL], "actions": [{"exchange": ["1H"]}]},
    "an action with an unknown seat": {
        "deals": [DEAL],
        "actions": [{"seat": "dealer", "exchange": ["1H"]}],
    },
    "an action that is not an object": {"deals": [DEAL], "actions": ["1H"]},
    "a seed that is not a number": {"seed": "seven", "actions": []},
    "a list at the top": [DEAL],
    "a string at the top": "deals",
    "a number at the top": 7,
}


@pytest.mark.parametrize("scenario", BAD_SCENARIOS.values(), ids=BAD_SCENARIOS.keys())
def test_bad_scenario_exits_2_with_one_line(scenario: object) -> None:
    assert_bad_input(replay_json(scenario))


def test_one_deal_no_seed_and_round_2_reached_exits_2() -> None:
    scenario = round_one_without_a_seed()
    assert_bad_input(replay_json(scenario))
    one_action_short = {**scenario, "actions": scenario["actions"][:-1]}
    result = replay_json(one_action_short)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["round"] == 1


def test_bad_json_exits_2() -> None:
    result = replay(["-"], '{"deals": [')
    assert_bad_input(result)
    assert "JSON" in result.stderr


@pytest.mark.parametrize("name", ["missing.json", "a-directory"])
def test_unreadable_file_exits_2(tmp_path: Path, name: str) -> None:
    (tmp_path / "a-directory").mkdir()
    result = replay([str(tmp_path / name)])
    assert_bad_input(result)
    assert name in result.stderr


@pytest.mark.parametrize("args", [[], ["-", "-"]], ids=["no arguments", "two arguments"])
def test_usage_error_exits_2(args: list[str]) -> None:
    result = replay(args)
    assert_bad_input(result)
    assert "usage" in result.stderr


def test_valid_scenario_from_a_seed_alone() -> None:
    result = replay_json({"seed": 7, "actions": []})
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["phase"] == "exchange" and output["to_act"] == ["keeper", "shadow"]
    dealt = output["hands"]["keeper"] + output["hands"]["shadow"]
    assert len(dealt) == len(set(dealt)) == 20 and set(dealt) <= set(DECK)


def assert_bad_input(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() and "\n" not in result.stderr.strip(), result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("where", ["deal", "action"])
def test_an_unknown_card_is_shown_as_json_and_cut_short(where: str) -> None:
    card = "X" * 10_000
    if where == "deal":
        scenario = {"deals": [{**DEAL, "keeper": replaced(DEAL["keeper"], "1H", card)}]}
    else:
        scenario = {"deals": [DEAL], "actions": [{"seat": "keeper", "exchange": [card]}]}
    result = replay_json(scenario)
    assert_bad_input(result)
    assert 'unknown card "XXX' in result.stderr and len(result.stderr) < 200, result.stderr[:300]
