import enum
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import pydantic
import pytest

from tools import tool
from tools.convert import to_declared
from tools.executor import execute_tool
from tools.registry import ToolRegistry


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass
class Point:
    x: int
    y: int = 0
    tags: set[str] = field(default_factory=set)


@dataclass
class Route:
    name: str
    stops: list[Point]


class Options(TypedDict):
    unit: Unit


class Place(pydantic.BaseModel):
    name: str
    rating: int = pydantic.Field(ge=1, le=5)

    @pydantic.field_validator("name")
    @classmethod
    def no_shouting(cls, name: str) -> str:
        if name.isupper():
            raise ValueError("the name must not be in capitals")
        return name


def test_it_builds_a_dataclass_with_nested_dataclasses_and_sets():
    route = to_declared({"name": "r", "stops": [{"x": 1, "tags": ["a", "a"]}]}, Route)

    assert route == Route("r", [Point(1, 0, {"a"})])


def test_it_turns_an_enum_value_into_its_member():
    assert to_declared("celsius", Unit) is Unit.CELSIUS


def test_it_turns_a_literal_enum_value_into_its_member():
    assert to_declared("fahrenheit", Literal[Unit.FAHRENHEIT]) is Unit.FAHRENHEIT


def test_it_keeps_a_typed_dict_a_dict_with_converted_fields():
    assert to_declared({"unit": "celsius"}, Options) == {"unit": Unit.CELSIUS}


def test_it_builds_tuples_and_frozensets():
    assert to_declared([1, "a"], tuple[int, str]) == (1, "a")
    assert to_declared([1, 2, 2], frozenset[int]) == frozenset({1, 2})


def test_it_picks_the_union_member_the_value_fits():
    assert to_declared({"x": 3}, Point | None) == Point(3)
    assert to_declared("celsius", int | Unit) is Unit.CELSIUS


def test_it_passes_none_through():
    assert to_declared(None, Point | None) is None


def test_it_validates_a_pydantic_model():
    assert to_declared({"name": "Café", "rating": 4}, Place) == Place(name="Café", rating=4)


@pytest.mark.parametrize("value", [{"x": 1}, [1, 2], "text", 3])
def test_it_leaves_untyped_values_alone(value):
    assert to_declared(value, dict) == value or to_declared(value, dict) is value


async def test_it_hands_the_tool_the_declared_types():
    @tool
    def plan(route: Route, unit: Unit = Unit.CELSIUS) -> str:
        """Plan a route."""
        return f"{type(route).__name__} {type(route.stops[0]).__name__} {unit.name}"

    result = await execute_tool(ToolRegistry([plan]), "plan", {"route": {"name": "r", "stops": [{"x": "1"}]}})

    assert result.content == "Route Point CELSIUS"


async def test_it_reports_a_value_a_pydantic_model_refuses_as_invalid_arguments():
    calls = []

    @tool
    def rate(place: Place) -> str:
        """Rate a place."""
        calls.append(place)
        return place.name

    result = await execute_tool(ToolRegistry([rate]), "rate", {"place": {"name": "CAFE", "rating": 4}})

    assert result.status == "error"
    assert result.content.startswith("Invalid arguments for rate: ")
    assert "the name must not be in capitals" in result.content
    assert calls == []


async def test_it_checks_pydantic_constraints_through_the_schema_first():
    @tool
    def rate(place: Place) -> str:
        """Rate a place."""
        return place.name

    result = await execute_tool(ToolRegistry([rate]), "rate", {"place": {"name": "x", "rating": 9}})

    assert result.content == "Invalid arguments for rate: place.rating: 9 is greater than the maximum of 5"
