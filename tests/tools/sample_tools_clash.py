"""A tool module whose tool takes a built-in's name: loading it must fail, naming this module."""

from tools import tool


@tool(name="calculator")
def my_calculator(expression: str) -> str:
    """A second calculator."""
    return expression
