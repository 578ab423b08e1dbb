"""Mokry 2016 §3.1: the linear-probing hash table with a prefetch queue (``table``, over csrc/hash/hashprobe.c) and its
sweep (``bench``: Table 3.2, Fig 3.2; `smtbench bench mokry_hash`)."""
