"""The command line: the only code that prints or exits. ``run`` is the console script, ``cli`` the click
group, ``main`` the entry point for tests and embedding (``main.py``)."""

from .main import cli as cli
from .main import main as main
from .main import run as run
