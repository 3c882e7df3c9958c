"""Log filters that keep URL credentials out of every line the app prints.

The app's own code never logs a secret (providers/secrets.py keeps credentials out of what it writes), but the
libraries under it log URLs they were given or sent: the MCP SDK's streamable-HTTP client prints a redirect's
target at WARNING ("GET stream not opened: Redirect to https://…"), and the target is whatever the server sent.
"""

from __future__ import annotations

import logging
import re

from providers.secrets import without_url_credentials

# The query of any URL in a text: after `scheme://authority/path?` up to the first space or quote.
_URL_QUERY = re.compile(r"(?P<url>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s?#'\"<>]*)\?[^\s#'\"<>]*")


def _rewrite(record: logging.LogRecord, rewrite) -> bool:
    message = record.getMessage()
    cleaned = rewrite(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None
    return True


class NoUrlCredentials(logging.Filter):
    """Every URL's `user:password@` taken out of the line (on the console handler: every line passes it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _rewrite(record, without_url_credentials)


class NoUrlQueries(logging.Filter):
    """Every URL's query replaced by `?…`, for loggers that print URLs a remote server chose (a token in a query
    string is common: `?api_key=`, `?token=`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _rewrite(record, lambda text: _URL_QUERY.sub(r"\g<url>?…", text))
