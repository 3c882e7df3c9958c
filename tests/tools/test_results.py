import json
import tracemalloc
from dataclasses import dataclass

import pydantic
from hypothesis import given
from hypothesis import strategies as st

from tools.results import MAX_CONTENT_CHARS, MAX_STORED_CHARS, capture, to_content, truncate

MB = 1024 * 1024


def _removed(text: str) -> int:
    return int(text.split("[truncated ")[1].split(" ")[0])


def test_it_keeps_a_short_text_whole_at_every_limit():
    captured = capture("short")

    assert (captured.text(MAX_CONTENT_CHARS), captured.text(MAX_STORED_CHARS)) == ("short", "short")


def test_it_caps_each_limit_with_head_tail_and_the_count_removed():
    text = "H" * 10 + "-" * 5000 + "T" * 10

    capped = capture(text, cap=1000).text(300)

    assert len(capped) <= 300
    assert capped.startswith("H" * 10) and capped.endswith("T" * 10)
    assert _removed(capped) == len(text) - (len(capped) - len(f"\n…[truncated {_removed(capped)} characters]…\n"))


def test_it_keeps_more_in_the_stored_text_than_in_the_model_text():
    captured = capture("x" * (3 * MB))

    assert len(captured.text(MAX_CONTENT_CHARS)) <= MAX_CONTENT_CHARS < len(captured.text(MAX_STORED_CHARS))
    assert len(captured.text(MAX_STORED_CHARS)) <= MAX_STORED_CHARS


def test_it_caps_a_50_mb_string_without_copying_it():
    huge = "a" * (25 * MB) + "z" * (25 * MB)
    tracemalloc.start()
    try:
        captured = capture(huge)
        content, stored = captured.text(MAX_CONTENT_CHARS), captured.text(MAX_STORED_CHARS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 8 * MB  # the two ends and their joins, not another 50 MB
    assert content.startswith("a") and content.endswith("z") and stored.endswith("z" * 1000)
    assert _removed(stored) == len(huge) - (len(stored) - len(f"\n…[truncated {_removed(stored)} characters]…\n"))


def test_it_caps_a_50_mb_list_of_large_items_keeping_only_the_two_ends_in_memory():
    rows = [{"id": n, "text": "x" * MB} for n in range(50)]
    tracemalloc.start()
    try:
        captured = capture(rows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert captured.total > 50 * MB
    assert peak < 12 * MB  # the two 1 MB ends, the item being encoded, joins; never the whole 50 MB
    assert captured.text(MAX_STORED_CHARS).startswith('[{"id": 0, ') and captured.tail.endswith('"}]')


json_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(json_data.filter(lambda value: not isinstance(value, str)))  # a str is the content itself
def test_property_pieces_join_to_json_dumps(value):
    assert to_content(value) == json.dumps(value, ensure_ascii=False)


@given(json_data, st.integers(min_value=100, max_value=400))
def test_property_capture_matches_truncating_the_whole_text(value, cap):
    assert capture(value, cap=cap).text(cap) == truncate(to_content(value), cap)


def test_it_writes_int_keys_as_json_does():
    assert to_content({1: "a", 2: [1]}) == '{"1": "a", "2": [1]}'


def test_it_renders_a_pydantic_model_as_json():
    class Place(pydantic.BaseModel):
        name: str
        rating: int

    assert to_content(Place(name="Café", rating=4)) == '{"name": "Café", "rating": 4}'


def test_it_renders_a_tuple_and_a_nested_dataclass_as_json():
    @dataclass
    class Inner:
        n: int

    @dataclass
    class Outer:
        inner: Inner
        pair: tuple[int, int]

    assert to_content(Outer(Inner(1), (2, 3))) == '{"inner": {"n": 1}, "pair": [2, 3]}'


def test_it_renders_values_with_no_json_form_inside_data_as_text():
    assert to_content({"when": complex(1, 2)}) == '{"when": "(1+2j)"}'
