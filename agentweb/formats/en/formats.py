"""English dates as the pages wrote them before they were translated ("6 Dec 2026, 14:05", day first, 24 hours):
the templates ask for DATE_FORMAT and its kin (Django's l10n), and each other language gets Django's own formats."""

DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATE_FORMAT = "j M Y"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
MONTH_DAY_FORMAT = "j M"
TIME_FORMAT = "H:i"
