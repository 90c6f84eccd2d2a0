"""accept4's corpora for issue #11, written without reading the other corpora: secret-bearing outputs of an
operations engineer's tools (``leaks_*.py``), ordinary output that must pass byte-identical (``benign/``), and
model-proposed arguments for approval cards (``cards.py``)."""
