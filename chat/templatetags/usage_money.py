"""`money`: a cost as the admin's usage report shows it (chat/usage.py money)."""

from django import template

from chat.usage import money as money_text

register = template.Library()


@register.filter
def money(cost) -> str:
    return money_text(cost)
