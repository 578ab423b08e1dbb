# The C extension built with this profile's flags (a stamp under build/, never committed) and the machine record
# that depends on it (see common.smk for why a fresh clone redoes every measurement).

rule build_native:
    conda: CONDA_ENV
    input:
        NATIVE_SOURCES,  # a changed kernel is rebuilt, and everything measured after it is measured again
    output:
        NATIVE_BUILD,
    params:
        native=int(GRID["native"]),
    log:
        f"build/native/{GRID_NAME}/build.log",
    shell:
        "SMTBENCH_NATIVE={params.native} python pylib/smtbench/_build.py > {log} 2>&1 "
        "&& cp pylib/smtbench/_buildinfo.json {output}"


rule machine:
    conda: CONDA_ENV
    input:
        NATIVE_BUILD,
    output:
        MACHINE,
    log:
        f"{OUT}/logs/machine.log",
    shell:
        "smtbench machine --out {output} > /dev/null 2> {log}"
