"""Phrase-based decoding: the Moses model (moses.ini, tables, features), the decoders, and their checks."""
