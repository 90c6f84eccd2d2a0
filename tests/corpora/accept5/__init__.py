"""Corpora of the fifth fresh-context acceptance check of issue #11 (``accept5``), written without reading the
project's other corpora: leak cases (``leaks_*.py``), ordinary output (``benign/*.txt``) and card argvs
(``cards.py``)."""
