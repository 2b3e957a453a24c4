import sys

# Before anything else is imported, in syntax every Python parses: an interpreter older than
# requires-python gets one line saying so, not a traceback from deep inside a dependency.
if sys.version_info < (3, 10):  # noqa: UP036 (this is the check)
    MESSAGE = (
        "jaxtarget needs Python 3.10 or newer; {} is Python {}. Choose a newer interpreter "
        "(jaxtarget.interpreter in VS Code, or --python).\n"
    )
    sys.stderr.write(MESSAGE.format(sys.executable, ".".join(str(n) for n in sys.version_info[:3])))
    raise SystemExit(2)

from .cli import main

raise SystemExit(main())
