"""Sub-command modules, discovered by smtbench.cli (each defines register(groups))."""
