"""One module per rule (code, docs, APIs, detection, fixes, examples) and their registry."""
