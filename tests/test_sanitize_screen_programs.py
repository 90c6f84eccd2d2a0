"""The echoed commands' cheap screen clears a line whose program no rule judges by name; every program a rule does
judge by name must therefore be among the screen's, or a line of it would be cleared unjudged past the judge's
budget and its secret shown (revsan6). These hold the screen's list to the rules' own tables."""

from __future__ import annotations

from bot.sanitize import echoed, echoed_screen, secret_argv
from bot.sanitize.echoed_screen import UNSURE, screen


def test_every_program_secret_argv_judges_by_name_is_one_the_screen_sends_on() -> None:
    assert secret_argv.PROGRAMS_JUDGED <= echoed_screen._ASKING_PROGRAMS
    assert set(secret_argv._PROGRAM_REVEAL_FLAGS) | secret_argv._OUTPUT_PROGRAMS <= secret_argv.PROGRAMS_JUDGED


def test_every_key_generator_and_value_getter_of_echoed_is_one_the_screen_sends_on() -> None:
    programs = {shape[0] for shape in echoed._KEY_GENERATORS + echoed._VALUE_GETTERS}
    assert programs <= echoed_screen._ASKING_PROGRAMS


def test_a_line_of_each_such_program_goes_on_to_the_judge() -> None:
    for program in sorted(secret_argv.PROGRAMS_JUDGED):
        assert screen(f"{program} something else") is not None, program
    assert screen("nmcli -s -g 802-11-wireless-security.psk connection show office") == UNSURE
    assert screen("git push origin main") is None
