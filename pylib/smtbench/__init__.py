"""smtbench: reproduce (then beat) the classic efficiency results of phrase-based SMT."""
__version__ = "0.1.0"
