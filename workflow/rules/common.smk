# Shared rules: build the C extension with this profile's flags and record the machine.
# Every benchmark rule takes BUILD (the machine record) as an input, so a profile's flags are what its rows record.
#
# Reproduction integrity: the native build of THIS checkout writes a stamp under build/ (never committed), and the
# machine record depends on it. A fresh clone has no stamp, so the build runs, the machine record is rewritten and
# every measurement (all downstream of BUILD) is redone -- committed results never pass for this machine's. An
# interrupted run keeps its stamp and resumes.

NATIVE_BUILD = f"build/native/{PROFILE}/buildinfo.json"
MACHINE = f"{OUT}/machine.json"
BUILD = [NATIVE_BUILD, MACHINE]  # the input of every measurement: both, so that a missing stamp reruns them
ALL.append(MACHINE)


rule build_native:
    output:
        NATIVE_BUILD,
    params:
        native=int(P.get("native", False)),
    log:
        f"build/native/{PROFILE}/build.log",
    shell:
        "SMTBENCH_NATIVE={params.native} python pylib/smtbench/_build.py > {log} 2>&1 "
        "&& cp pylib/smtbench/_buildinfo.json {output}"


rule machine:
    input:
        NATIVE_BUILD,
    output:
        MACHINE,
    log:
        f"{OUT}/logs/machine.log",
    shell:
        "smtbench machine --out {output} > /dev/null 2> {log}"
