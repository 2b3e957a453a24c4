"""Source text without a parse (semantics/text.py): identifier lines and statement starts, after edits.

Read here:

- an identifier's lines hold it whole: ``lax`` is not found in ``lax_linalg``,
  ``lax_numpy``, ``_lax`` or ``élax`` (an identifier character either side ends the match);
- a word's lines equal a search of each line, also for a word the text never spells
  whole (answered from one pass over the text) and for a dotted one;
- a version read from the one before it (``Lines(edited, previous)``) gives what a
  fresh scan gives, also where the previous version never looked the word up or never
  scanned its statement starts (an editor's first edit, before any check of the old text);
- an edit in the last statement, past every start the previous version had, rescans
  from the start of the file when the first statement is within reach of the edit;
- a triple quote left open with a plain quote later on its line (``s = \"\"\"doc"``, an
  unfinished docstring) makes the scan before it depend on what comes after: closing it
  further down merges what lies between into one statement.

Modelled on the imports of jax-ml/jax jax/_src/numpy/linalg.py (``from jax._src.lax
import lax``, ``linalg as lax_linalg``, ``lax_numpy as jnp``) and on the edits an
editor sends while a docstring is typed. The code is written for this suite.
"""

from __future__ import annotations

import re

from jaxtarget.semantics.text import Lines

IMPORTS = """\
from jax._src.lax import lax
from jax._src.lax import linalg as lax_linalg
from jax._src.numpy import lax_numpy as jnp
_lax = élax = None
w, v = lax_linalg.eigh(a)
y = lax.full_like(w, 0)
"""


def test_an_identifiers_lines_hold_it_whole() -> None:
    text = Lines(IMPORTS)
    # ``jax._src.lax`` holds it whole too (a dot is no identifier character)
    assert text.word_lines("lax") == [1, 2, 6]
    assert text.word_lines("lax_linalg") == [2, 5]
    assert text.word_lines("jnp") == [3]
    assert text.word_lines("élax") == [4]  # an identifier character outside ASCII
    assert text.word_lines("lax_num") == text.word_lines("ax") == []  # only inside longer ones


def test_word_lines_agree_with_a_search_per_line() -> None:
    """The lines of every word equal a regular-expression search of each line, for words
    present whole, only inside longer identifiers, outside ASCII, and absent."""
    source = IMPORTS + "λ_lax = lax2 = 2lax = lax.λ\nprint(élax, lax_)\n"
    text, dropped = Lines(source), Lines(source)
    dropped.drop_vocabulary()  # searched word by word, as after an analysis
    words = {*re.findall(r"\w+", source), "lax_num", "ax", "λ", "absent", "lax.full_like"}
    for word in sorted(words):
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")
        expected = [n for n, line in enumerate(source.splitlines(), 1) if pattern.search(line)]
        assert text.word_lines(word) == dropped.word_lines(word) == expected, word


def test_an_edit_after_a_version_never_scanned_reads_as_a_fresh_scan() -> None:
    previous = Lines(IMPORTS)  # nothing looked up in it
    edited = IMPORTS.replace("full_like(w, 0)", "full_like(v, 1)\nz = lax.neg(y)")
    incremental, fresh = Lines(edited, previous), Lines(edited)
    assert incremental.word_lines("lax") == fresh.word_lines("lax") == [1, 2, 6, 7]
    assert incremental.statement_starts() == fresh.statement_starts() == [1, 2, 3, 4, 5, 6, 7]


def test_an_edit_in_the_last_statement_keeps_every_start() -> None:
    source = "x = 1\ny = 2\n"
    previous = Lines(source)
    assert previous.statement_starts() == [1, 2]
    incremental = Lines("x = 1\ny = 3\n", previous)
    assert incremental.statement_starts() == [1, 2]


def test_a_triple_quote_left_open_is_read_again_once_closed() -> None:
    body = "".join(f"v{i} = {i}\n" for i in range(6))
    source = 's = """doc"\n' + body
    previous = Lines(source)
    # ``""`` then ``"doc"``: seven statements while nothing closes the triple quote
    assert previous.statement_starts() == [1, 2, 3, 4, 5, 6, 7]
    closed = source + '"""\n'
    assert Lines(closed, previous).statement_starts() == Lines(closed).statement_starts() == [1]
