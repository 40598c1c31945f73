"""The typed command-line numbers (cxlsim/config/arguments.py): what each accepts and refuses, at
its bounds and one past them, drawn by hypothesis."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cxlsim.config.arguments import (
    FIGURE_SUFFIXES,
    figure_path,
    number,
    percent,
    whole,
    whole_or_auto,
)


@given(st.integers(-1000, 1000), st.integers(0, 1000), st.integers(-2000, 2000))
def test_whole_accepts_exactly_the_closed_range(lo, span, value):
    hi = lo + span
    parse = whole(lo, hi)
    if lo <= value <= hi:
        assert parse(str(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(str(value))


@given(st.integers(-1000, 1000), st.integers(0, 10**12))
def test_whole_without_a_maximum_takes_every_number_from_its_minimum(lo, above):
    assert whole(lo)(str(lo + above)) == lo + above
    with pytest.raises(argparse.ArgumentTypeError):
        whole(lo)(str(lo - 1))


@pytest.mark.parametrize("text", ["", "1.5", "two", "1e3", "nan"])
def test_whole_refuses_what_is_not_a_whole_number(text):
    with pytest.raises(argparse.ArgumentTypeError, match="whole number"):
        whole(0)(text)


@given(st.floats(-1e6, 1e6), st.floats(0, 1e6), st.floats(-3e6, 3e6), st.booleans())
def test_number_accepts_exactly_its_range(lo, span, value, exclusive):
    hi = lo + span
    parse = number(lo, hi, exclusive_minimum=exclusive)
    inside = (lo < value if exclusive else lo <= value) and value <= hi
    if inside:
        assert parse(repr(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(repr(value))


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "infinity"])
def test_number_refuses_what_is_not_finite(text):
    with pytest.raises(argparse.ArgumentTypeError, match="finite"):
        number(-1e300)(text)


def test_number_without_a_maximum_takes_large_values_and_its_bound():
    assert number(0.0)("1e300") == 1e300
    assert number(0.0)("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError):
        number(0.0, exclusive_minimum=True)("0")


@pytest.mark.parametrize("text", ["auto", "AUTO", " Auto "])
def test_auto_is_auto_in_any_case(text):
    assert whole_or_auto(1)(text) == "auto"


@given(st.integers(-50, 50))
def test_whole_or_auto_is_a_whole_number_otherwise(value):
    parse = whole_or_auto(1)
    if value >= 1:
        assert parse(str(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(str(value))
    with pytest.raises(argparse.ArgumentTypeError):
        parse("automatic")


@pytest.mark.parametrize(("text", "fraction"), [("1%", 0.01), ("0.5 %", 0.005), ("0.25", 0.25), ("99.9%", 0.999)])
def test_percent_reads_a_percentage_or_a_fraction(text, fraction):
    assert percent(text) == pytest.approx(fraction)


@pytest.mark.parametrize("text", ["0%", "100%", "0", "1", "-1%", "nan", "inf%", "x%"])
def test_percent_refuses_the_ends_and_what_is_not_a_number(text):
    with pytest.raises(argparse.ArgumentTypeError):
        percent(text)


@pytest.mark.parametrize("suffix", FIGURE_SUFFIXES + (".PNG",))
def test_a_figure_name_with_a_format_suffix_in_an_existing_folder(tmp_path, suffix):
    name = str(tmp_path / f"fig{suffix}")
    assert figure_path()(name) == name


@pytest.mark.parametrize("name", ["fig", "fig.txt", ".png", "fig.png.bak"])
def test_a_figure_name_without_a_format_is_refused(tmp_path, name):
    with pytest.raises(argparse.ArgumentTypeError, match="ending in"):
        figure_path()(str(tmp_path / name))


def test_a_figure_in_a_missing_folder_is_refused_unless_the_command_creates_it(tmp_path):
    name = str(tmp_path / "missing" / "fig.png")
    with pytest.raises(argparse.ArgumentTypeError, match="does not exist"):
        figure_path()(name)
    assert figure_path(folder_must_exist=False)(name) == name
