"""Weight tuning as Moses does it: BLEU sufficient statistics (``bleu``), the merged n-best lists of every
iteration (``pool``), MERT's exact line search with random restarts (``mert``), k-best batch MIRA (``mira``), the
mert-moses.pl loop (``loop``) and Moses' own extractor/mert/kbmira on the same lists (``moses``)."""
