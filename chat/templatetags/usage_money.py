"""The usage report's numbers: `money`, a cost as the admin writes every cost (agentweb/admin_display.py money),
and `count`, a number of calls or tokens with its thousands marked (12,300)."""

from django import template

from agentweb.admin_display import money as money_text

register = template.Library()


@register.filter
def money(cost) -> str:
    return money_text(cost)


@register.filter
def count(number) -> str:
    return f"{number or 0:,}"
