"""German as the tests read it: Django's month names in German dates (`DATE_FORMAT` "j. F Y")."""

GERMAN_MONTHS = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
]
