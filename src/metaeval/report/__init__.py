"""Views of results: figures (matplotlib, imported lazily) and tables.

Nothing here computes statistics; every function reads result objects.
"""
