"""moses_training: our training pipeline against Moses' (issue 25 moved it here from report/moses_decode.py): the
fidelity of our tables built from the oracle's alignment against Moses' own, and the dev BLEU of our end-to-end model
beside the oracle's model (`smtbench report moses_training`; the decode rows are `bench moses_decode`'s)."""
from __future__ import annotations

import pandas as pd


def training_table(fidelity: dict, ours: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    """Training fidelity (our tables from the oracle's alignment vs Moses' own) and BLEU of an end-to-end model."""
    rows = []
    for name, r in fidelity.items():
        rows.append({"check": f"{name.replace('_', ' ')} (dev-filtered) vs Moses'", "ours": r["ours"],
                     "moses": r["theirs"], "common": r["common"], "value_mismatches": r["value_mismatches"],
                     "alignment_mismatches": r["alignment_mismatches"], "count_mismatches": r["count_mismatches"],
                     "bleu": None})
    qo = ours[ours.kind == "quality"].iloc[-1]
    qm = oracle[oracle.kind == "quality"].iloc[-1]
    rows.append({"check": "dev BLEU, our end-to-end model (eflomal + our tables + our 5-gram LM), normal search",
                 "bleu": qo.bleu, "ours": None, "moses": None, "common": None, "value_mismatches": None,
                 "alignment_mismatches": None, "count_mismatches": None})
    rows.append({"check": "dev BLEU, the oracle's Moses-trained model, same search", "bleu": qm.bleu, "ours": None,
                 "moses": None, "common": None, "value_mismatches": None, "alignment_mismatches": None,
                 "count_mismatches": None})
    df = pd.DataFrame(rows)
    for col in ("ours", "moses", "common", "value_mismatches", "alignment_mismatches", "count_mismatches"):
        df[col] = df[col].astype("Int64")
    return df


TRAINING_NOTES = ("Fidelity: the oracle's shipped symmetrised alignment -> our extraction (max length 7, wbe-msd "
                  "orientations), phrase scoring (C, Mediani's kernel) and reordering scoring (0.5 smoothing), "
                  "filtered to the dev source as filter-model-given-input.pl does, compared pair by pair with "
                  "the oracle's phrase-table.dev.gz and reordering-table.dev.gz (values to the printed 6 "
                  "significant digits, +-1 in the last; alignments and counts exactly). BLEU: sacrebleu "
                  "--tokenize none on the tokenized lowercased dev books; our alignment comes from eflomal, "
                  "which is not seedable, so this BLEU varies slightly between clones.")
