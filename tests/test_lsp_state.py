"""What the language server keeps of each open document (lsp/state.py).

An open document's analysis, with its syntax trees, is most of what the server holds for
it. The analyses of the ``HOT_DOCUMENTS`` documents analysed most recently are kept; that
of one analysed before them is dropped (with its parsed chunks), unless an analysis of it
is under way. Read here on the server object itself; the requests that then compute an
analysis again are tested end to end in test_lsp.py.
"""

from __future__ import annotations

import asyncio

from jaxtarget.lsp.state import HOT_DOCUMENTS, Document, JaxTargetServer
from jaxtarget.semantics.source import ChunkCache


def test_only_the_documents_analysed_last_keep_their_analysis() -> None:
    server = JaxTargetServer()
    uris = [f"file:///m{i}.py" for i in range(HOT_DOCUMENTS + 3)]
    caches = {}
    for uri in uris:
        state = server.documents[uri] = Document(checked=object())  # type: ignore[arg-type]
        caches[uri] = state.chunks
    loop = asyncio.new_event_loop()
    try:
        busy = server.documents[uris[1]]
        busy.running = ((1, 0), loop.create_future())
        for uri in uris:
            server._keep_hot(uri)
        server._keep_hot(uris[3])  # analysed again: it is the newest now
        server._keep_hot(uris[-1])
    finally:
        loop.close()
    dropped = [u for u in uris if server.documents[u].checked is None]
    assert dropped == [uris[0], uris[2]]
    for uri in dropped:
        assert server.documents[uri].chunks is not caches[uri]
        assert isinstance(server.documents[uri].chunks, ChunkCache)
    assert server.documents[uris[1]].checked is not None  # under way: kept
    # oldest first: the two analysed again last are at the end
    assert list(server.hot) == [*uris[4:-1], uris[3], uris[-1]]
