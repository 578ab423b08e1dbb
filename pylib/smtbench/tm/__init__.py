"""Translation-model training: word alignment (eflomal + grow-diag-final-and), Moses phrase extraction,
and phrase scoring (Mediani et al.'s parallel external-memory scorer, plus the in-memory and sort baselines)."""
