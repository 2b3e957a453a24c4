"""Source edits shared by the rules' fixes: layout helpers, guards, test skips, suppression.

Every fix keeps the module parseable, keeps its indentation style (spaces or
tabs), leaves multi-line string contents alone and touches nothing outside the
lines it rewrites. Helpers here are parameterised by platforms, never by rule.
"""
