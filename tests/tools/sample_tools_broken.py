"""A tool module that fails on import, as one with a missing dependency would."""

import agentweb_no_such_dependency  # noqa: F401
