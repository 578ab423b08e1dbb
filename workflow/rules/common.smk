# Shared rules: build the C extension with this profile's flags and record the machine.
# Every benchmark rule takes BUILD as an input, so a profile's flags are what its rows record.

BUILD = f"{OUT}/machine.json"


rule build_native:
    output:
        BUILD,
    params:
        native=int(P.get("native", False)),
    log:
        f"{OUT}/logs/build_native.log",
    shell:
        "SMTBENCH_NATIVE={params.native} python pylib/smtbench/_build.py > {log} 2>&1 "
        "&& smtbench machine --out {output} > /dev/null"
