"""The public new-game form."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import EmailField, IntegerField, RadioField, SelectChoice, StringField
from wtforms.validators import Email, InputRequired, Length, NumberRange, Optional


class NewGameForm(FlaskForm):
    """Who plays, which role the creator takes, how long each move may take."""

    name = StringField("Your name", validators=[InputRequired(), Length(max=80)])
    email = EmailField("Your email", validators=[InputRequired(), Email(), Length(max=254)])
    opponent_name = StringField(
        "Your opponent's name", validators=[InputRequired(), Length(max=80)]
    )
    opponent_email = EmailField(
        "Your opponent's email", validators=[InputRequired(), Email(), Length(max=254)]
    )
    role = RadioField(
        "Your role",
        choices=[
            SelectChoice("keeper", "Keeper"),
            SelectChoice("shadow", "Shadow"),
            SelectChoice("random", "Random"),
        ],
        default="random",
    )
    format = RadioField(
        "Play",
        choices=[
            SelectChoice("single", "One game"),
            SelectChoice("match", "A return match (two games, roles swapped)"),
        ],
        default="single",
    )
    look = RadioField(
        "Cards",
        choices=[
            SelectChoice("standard", "Standard deck"),
            SelectChoice("classic", "Classic colours"),
        ],
        default="standard",
    )
    days = IntegerField(
        "Days per move (empty for no deadline)",
        default=7,
        validators=[Optional(), NumberRange(min=1, max=60)],
    )
