import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_it_imports_nothing_from_django_or_chat_nor_pydantic():
    # A fresh interpreter: in this one, pytest-django has already imported Django. pydantic is optional and
    # only read from sys.modules, so building every built-in must not import it either.
    code = (
        "import sys, tools, tools.executor, tools.loader, tools.net, tools.registry\n"
        "tools.registry.build_registry()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'chat', 'channels', 'pydantic'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == ""
