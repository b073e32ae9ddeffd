# Two commands: `make run` serves a playable service on its embedded defaults
# (SQLite and a local mailbox); `make test` runs the whole test suite.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FLASK := $(BIN)/flask --app service
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: run test lint bench browser imap translations clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(FLASK) db upgrade
	BASE_URL=$${BASE_URL:-http://$(HOST):$(PORT)} $(FLASK) serve --host $(HOST) --port $(PORT)

test: $(STAMP) browser imap
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# Under CI=true the browser tests are required: install Debian's Chromium when missing.
browser:
	@if [ "$$CI" = "true" ] && ! command -v chromium >/dev/null 2>&1; then \
		echo "Installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# Under CI=true the IMAP tests are required: install Debian's Dovecot IMAP server when missing
# (the tests start their own, on a free port, and never the system's).
imap:
	@if [ "$$CI" = "true" ] && ! command -v dovecot >/dev/null 2>&1; then \
		echo "Installing Debian's dovecot-imapd for the IMAP tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dovecot-imapd >/dev/null; \
	fi

# Re-extract the strings to translate, merge them into each catalogue, compile the catalogues.
# Translate the new entries of service/translations/*/LC_MESSAGES/messages.po, then run it again.
translations: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _l -o service/translations/messages.pot --project "Split Mind by Mail" --no-wrap .
	$(BIN)/pybabel update -i service/translations/messages.pot -d service/translations --no-wrap --no-fuzzy-matching
	$(BIN)/pybabel compile -d service/translations --statistics

lint: $(STAMP)
	$(BIN)/ruff check service tests bench
	$(BIN)/ruff format --check service tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) instance .pytest_cache .mypy_cache tests/artifacts
