"""Corpora of the sixth fresh-context acceptance check of issue #11 (``accept6``), written before reading the
project's other corpora or detectors: leak cases (``leaks_*.py``), ordinary output (``benign.py``) and card argvs
(``cards.py``), all generated deterministically (``values.py``)."""
