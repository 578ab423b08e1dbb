"""Tables and figures from benchmark rows: one module per paper, one function per paper table/figure."""
