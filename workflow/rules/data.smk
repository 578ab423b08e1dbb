# The shipped bible-es-en corpus → tokenized, lowercased whole-book splits under work/data/ (gitignored).
DATA = "work/data"
DATA_TSV = "resources/bible-es-en/es-en.tsv.xz"


rule data_prepare:
    conda: CONDA_ENV
    input:
        DATA_TSV,
    output:
        expand("work/data/{split}.{lang}", split=["train", "dev", "test"], lang=["es", "en"]),
        expand("work/data/{split}.raw.{lang}", split=["dev", "test"], lang=["es", "en"]),
        expand("work/data/{split}.ref", split=["train", "dev", "test"]),
    log:
        "work/logs/data_prepare.log",
    shell:
        "smtbench data prepare --tsv {input} --outdir work/data > {log} 2>&1"
