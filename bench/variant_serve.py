"""`python -m bench.variant_serve [daphne's options] bench.variant_asgi:application`: agentweb.serve with the
variants of BENCH_VARIANTS applied before Daphne builds its server.

agentweb.serve is imported here as a module (under `python -m agentweb.serve` it is `__main__`, and a patch of
the module `agentweb.serve` would change a copy nobody runs); the ASGI module, imported next, patches its classes
(bench/stock_variants.py), and its `main` then builds the server from them."""

import agentweb.serve  # first: Daphne installs Twisted's asyncio reactor as it is imported
import bench.variant_asgi  # noqa: F401 (applies the variants)

agentweb.serve.main()
