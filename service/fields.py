"""Form fields the player's pages share."""

from __future__ import annotations

from typing import Any

from flask_babel import LazyString
from flask_wtf import FlaskForm
from wtforms import Field, IntegerField
from wtforms.validators import NumberRange


class WholeNumberField(IntegerField):
    """A whole number from ``low`` to ``high``, refused with one ``message`` in the reader's
    language, whether what was typed is no number or one out of range.

    WTForms' own field says "Not a valid integer value." from its own catalogue, then its
    range check, finding no number, says the range again: two messages for one mistake.
    """

    def __init__(
        self,
        label: str | LazyString,
        *,
        low: int,
        high: int,
        message: str | LazyString,
        validators: list[Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            label,
            validators=[*(validators or []), _NumberInRange(min=low, max=high, message=message)],
            invalid_value_message=message,
            **options,
        )


class _NumberInRange(NumberRange):
    """The range of a number, checked only of what was a number: the field said the rest."""

    def __call__(self, form: FlaskForm, field: Field) -> None:
        if not field.process_errors:
            super().__call__(form, field)
