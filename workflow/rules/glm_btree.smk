# Bogoychev & Lopez 2016 (gLM) §5: the B-tree trie LM on CPU (and GPU when one is lent) against our probing LM,
# KenLM's own C++ probing and trie models (kenlm_benchmark -t T at each thread count) and the kenlm module -> Tables 3-5, B-stump shares, Figs 9-10. Models are the estimator's outputs
# work/lm/{name}.arpa.gz (names from lm_models); the main model also gets the node-size and batch sweeps.
GLM_BTREE = GRID["glm_btree"] if "glm_btree" in GRID else None  # absent from the grid: not run

GLM_MAIN = GLM_BTREE["model"] if GLM_BTREE else ""
GLM_BIG = GLM_BTREE["big_model"] if GLM_BTREE else ""
GLM_ORDERS = list(GLM_BTREE["order_models"]) if GLM_BTREE else []
GLM_MODELS = list(dict.fromkeys([m for m in [GLM_MAIN, GLM_BIG, *GLM_ORDERS] if m]))
import re as _re_glm

GLM_NAME_RE = "|".join(_re_glm.escape(m) for m in GLM_MODELS) if GLM_MODELS else "NO_GLM_MODELS"
GLM_ROWS = expand(f"{OUT}/raw/glm_btree/{{name}}.jsonl", name=GLM_MODELS)
GLM_TABLES = [f"{OUT}/tables/glm_table3.md", f"{OUT}/tables/glm_bstumps.md", f"{OUT}/tables/glm_device.md"]
# the lent device's rows (tools/device-rows.sh --import; issue 43), committed where a session was lent one: no rule
# makes them, so they are an input only where present, and glm_device says "not lent" without them
GLM_DEVICE = [p for p in [f"{OUT}/raw/glm_btree/device.jsonl"] if Path(p).is_file()]
if GLM_BIG:
    GLM_TABLES.append(f"{OUT}/tables/glm_table4.md")
if GLM_ORDERS:
    GLM_TABLES.append(f"{OUT}/tables/glm_table5.md")

if GLM_BTREE:
    ALL += GLM_TABLES + [f"{OUT}/figures/glm_fig9.png", f"{OUT}/figures/glm_fig10.png"]
    METRICS.append(f"{OUT}/metrics/glm_btree.csv")


if GLM_BTREE:

    rule glm_build_cuda:
        """Compile the GPU kernels when nvcc exists (an empty report otherwise); bench rows say why no GPU ran."""
        conda: CONDA_ENV
        output:
            f"{OUT}/glm_cuda_build.json",
        log:
            f"{OUT}/logs/glm_build_cuda.log",
        shell:
            "smtbench build-cuda --if-nvcc --check > {output} 2> {log}"


    rule glm_btree_bench:
        """Table 3 points (B-tree, stream reuse, probing LM per thread count; KenLM's own C++ probing and trie models
        by kenlm_benchmark -t T at each thread count), node-size and batch sweeps for the main model; repeats interleaved."""
        conda: CONDA_ENV
        input:
            BUILD,
            f"{OUT}/glm_cuda_build.json",
            unpack(_glm_peers),
            arpa="work/lm/{name}.arpa.gz",
            text=GLM_BTREE["text"],
        output:
            f"{OUT}/raw/glm_btree/{{name}}.jsonl",
        wildcard_constraints:
            name=GLM_NAME_RE,
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            protocol=protocol_args("glm_btree"),  # the grid's repeat protocol with the experiment's own keys
            sweeps=_glm_sweeps,
            k=GLM_BTREE["node_size"],
            threads=",".join(map(str, GLM_BTREE["threads"])),
            il=GLM_BTREE["interleave"],
            repeats=GLM_BTREE["repeats"],
            minq=GLM_BTREE["min_queries"],
            peers=lambda wc, input: " ".join(f"--kenlm-binary {k}={input[k]}" for k in ("probing", "trie")
                                             if k in input.keys()),
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
            mem_mb=lambda wc, input: int(input.size_mb * 12) + 2048,
        log:
            f"{OUT}/logs/glm_btree/{{name}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench guard --what 'gLM B-tree sweep of {wildcards.name}' -- "
            "smtbench bench glm_btree --arpa {input.arpa} --text {input.text} --name {wildcards.name} "
            "--node-size {params.k} --threads {params.threads} --interleave {params.il} {params.sweeps} "
            "--repeats {params.repeats} {params.protocol} --min-queries {params.minq} {params.peers} --progress --out {output} 2> {log}"


    rule glm_btree_report:
        conda: CONDA_ENV
        input:
            rows=GLM_ROWS,
            counts=COUNTS_TABLE,
            device=GLM_DEVICE,
        output:
            GLM_TABLES,
            shown_all([f"{OUT}/tables/{t}.csv" for t in ("glm_table3", "glm_bstumps", "glm_device")], "glm_btree"),
            shown(f"{OUT}/figures/glm_fig9.png", "glm_btree"),
            shown(f"{OUT}/figures/glm_fig10.png", "glm_btree"),
            metrics=f"{OUT}/metrics/glm_btree.csv",
        params:
            big=f"--big-model {GLM_BIG}" if GLM_BIG else "",
            orders=f"--order-models {_glm_order_arg()}" if GLM_ORDERS else "",
            k=GLM_BTREE["node_size"],
            out=lambda wildcards, output: str(Path(output.metrics).parent.parent),
            glm_main=GLM_MAIN,
            counts=counts_option,
            device=lambda wildcards, input: f"--device-rows {input.device}" if input.device else "",
        log:
            f"{OUT}/logs/glm_btree/report.log",
        shell:
            "smtbench report glm_btree --rows {input.rows} {params.counts} --model {params.glm_main} {params.big} {params.orders} "
            "--node-size {params.k} {params.device} --tables {params.out}/tables --figures {params.out}/figures "
            "--metrics {output.metrics} 2> {log}"
