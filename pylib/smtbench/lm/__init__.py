"""n-gram language models: ARPA I/O (arpa), the KenLM-exact probing LM with its automaton queue
(probing), scorer backends (backends)."""
from .arpa import ArpaFormatError, ArpaModel, NgramTable, read_arpa, write_arpa

__all__ = ["ArpaFormatError", "ArpaModel", "NgramTable", "read_arpa", "write_arpa"]
