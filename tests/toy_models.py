"""Toy models shared by the tests (one copy each): import them (`from toy_models import TOY_ARPA`) or use the
conftest fixture `toy_arpa` (a path)."""

#: a 3-gram ARPA with <unk>, a -99 <s>, back-offs and a missing-context-free trie; kenlm loads it
TOY_ARPA = """\\data\\
ngram 1=5
ngram 2=4
ngram 3=2

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.5
-0.7\t</s>
-0.6\ta\t-0.3
-0.8\tb\t-0.2

\\2-grams:
-0.3\t<s> a\t-0.1
-0.4\ta b\t-0.15
-0.5\tb </s>
-0.6\tb a\t0

\\3-grams:
-0.2\t<s> a b
-0.1\ta b </s>

\\end\\
"""
