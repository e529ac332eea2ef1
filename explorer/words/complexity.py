"""The complexity tab's words: the sweep's figure, the claim, the summary, the table of
runs, the notes of the timing engine and the errors of the view."""

TEXT = {
    # the timed forms (catalog.SWEEP_METHOD_LABELS)
    "complexity.method.softmax_naive": {"en": "softmax, naive N x N", "zh": "softmax（朴素 N×N）"},
    "complexity.method.sdpa": {"en": "softmax, torch SDPA", "zh": "softmax（torch SDPA）"},
    "complexity.method.linear_parallel": {"en": "linear, non-causal (always)", "zh": "线性（非因果，总可用）"},
    "complexity.method.linear_chunked": {"en": "linear, chunked", "zh": "线性（分块）"},
    "complexity.method.linear_recurrent": {"en": "linear, recurrent (causal)", "zh": "线性（循环，因果）"},
    "complexity.method.linear_cumsum": {"en": "linear, cumsum reference (causal)", "zh": "线性（cumsum 参照，因果）"},
    # errors of the view
    "complexity.err_nmin": {"en": "N min: at least 16 tokens, got {n}", "zh": "N 最小值：至少 16 个词元，收到的是 {n}"},
    "complexity.err_nmax": {"en": "N max: at most {cap} tokens on this server, got {n}",
                            "zh": "N 最大值：本服务器最多 {cap} 个词元，收到的是 {n}"},
    "complexity.err_order": {"en": "N max ({nmax}) must be at least N min ({nmin})",
                             "zh": "N 最大值（{nmax}）不能小于 N 最小值（{nmin}）"},
    "complexity.err_points": {"en": "points: between 1 and {top}, got {points}", "zh": "点数：应在 1 到 {top} 之间，收到的是 {points}"},
    "complexity.err_d": {"en": "d: between 1 and 512, got {d}", "zh": "d：应在 1 到 512 之间，收到的是 {d}"},
    "complexity.err_m": {"en": "m: between 1 and 2048, got {m}", "zh": "m：应在 1 到 2048 之间，收到的是 {m}"},
    "complexity.err_repeats": {"en": "repeats: between 1 and 20, got {repeats}", "zh": "计时次数：应在 1 到 20 之间，收到的是 {repeats}"},
    "complexity.err_methods": {"en": "methods: choose at least one method", "zh": "方法：请至少选一种方法"},
    "complexity.err_memory": {"en": "memory: every run is over the memory budget; lower N max",
                              "zh": "内存：每次运行都超出内存预算；请减小 N 最大值"},
    "complexity.skipped_memory": {"en": "{method}: skipped at N ≥ {n} (estimated memory over the {budget} GiB budget)",
                                  "zh": "{method}：N ≥ {n} 时跳过（估计内存超出 {budget} GiB 预算）"},
    # the timing engine's sentences
    "complexity.note_rounds": {"en": "time: the methods run in {rounds} interleaved rounds at each N (order rotated "
                                     "every round), after {warmup} warm-up call(s); a round's sample is "
                                     "torch.utils.benchmark.Timer.timeit of the call repeated to last at least {ms} "
                                     "ms; the median is shown, the spread (fastest to slowest round) beside it.",
                               "zh": "计时：每个 N 上各方法交错运行 {rounds} 轮（每轮轮换顺序），先预热 {warmup} 次；"
                                     "每轮的样本是 torch.utils.benchmark.Timer.timeit 重复调用至少 {ms} ms 的结果；"
                                     "图中为中位数，旁边是离散范围（最快轮到最慢轮）。"},
    "complexity.note_setup": {"en": "float32, {map} with m = {m}, chunk {chunk}, torch {torch}, {threads} CPU "
                                    "thread(s).",
                              "zh": "float32，{map}，m = {m}，分块 {chunk}，torch {torch}，{threads} 个 CPU 线程。"},
    "complexity.note_cancelled": {"en": "cancelled: the rows show what was measured before",
                                  "zh": "已取消：表中是取消前测得的结果"},
    "complexity.note_matmul": {"en": "dense matmul {size}^2 before and after: {before} and {after} GFLOP/s; ratios "
                                     "use the higher",
                               "zh": "扫描前后 {size}^2 稠密矩阵乘：{before} 和 {after} GFLOP/s；比值用较高者"},
    "complexity.disturbed": {"en": "measurement disturbed by other load", "zh": "测量受到其他负载干扰"},
    "complexity.reason_rate": {"en": "the dense-matmul rate moved from {a} to {b} GFLOP/s during the sweep",
                               "zh": "扫描期间稠密矩阵乘速率从 {a} 变为 {b} GFLOP/s"},
    "complexity.reason_spread": {"en": "{method} at N = {n} varied by {pct}% between rounds (the slowest round aside)",
                                 "zh": "{method} 在 N = {n} 时各轮相差 {pct}%（最慢的一轮除外）"},
    "complexity.reason_stall": {"en": "torch's threads stall ({x}× slower on a tiny operation than one thread): another "
                                      "process is using the cores",
                                "zh": "torch 的线程停顿（一个极小运算比单线程慢 {x}×）：有别的进程在占用 CPU 核"},
    "complexity.skip_causal": {"en": "causal form only; run with causal=True", "zh": "仅有因果形式；请勾选因果"},
    "complexity.skip_cap": {"en": "N above this method's cap {cap}", "zh": "N 超过此方法的上限 {cap}"},
    "complexity.skip_memory": {"en": "estimated {need} GiB > memory budget {budget} GiB",
                               "zh": "估计 {need} GiB > 内存预算 {budget} GiB"},
    "complexity.skip_time": {"en": "time budget: predicted {need} s, {left} s left",
                             "zh": "时间预算：预计 {need} s，只剩 {left} s"},
    "complexity.cross_none": {"en": "no N where both {a} and {b} were measured",
                              "zh": "没有哪个 N 上 {a} 和 {b} 都测过"},
    "complexity.cross_already": {"en": "{b} is already faster than {a} at the smallest common N = {n}",
                                 "zh": "在共同的最小 N = {n} 时，{b} 已经比 {a} 快"},
    "complexity.cross_at": {"en": "{b} overtakes {a} at N ~ {n} (between {n1} and {n2})",
                            "zh": "{b} 在 N ~ {n}（介于 {n1} 与 {n2} 之间）时超过 {a}"},
    "complexity.cross_never": {"en": "{a} stays faster than {b} up to the largest common N = {n}",
                               "zh": "直到共同的最大 N = {n}，{a} 一直比 {b} 快"},
    # the figure
    "complexity.panel_time": {"en": "time per call (median)", "zh": "每次调用的时间（中位数）"},
    "complexity.panel_memory": {"en": "extra peak memory per call", "zh": "每次调用的额外峰值内存"},
    "complexity.slope": {"en": "{label}  (slope {slope})", "zh": "{label}（斜率 {slope}）"},
    "complexity.flop_model": {"en": "dotted: FLOP count ÷ the measured matmul rate", "zh": "点线：FLOP 数 ÷ 实测矩阵乘速率"},
    "complexity.flop_line": {"en": "{label}: FLOPs at the matmul rate", "zh": "{label}：按矩阵乘速率换算的 FLOPs"},
    "complexity.hover_model": {"en": "FLOP model", "zh": "FLOP 模型"},
    "complexity.crossover": {"en": "crossover<br>N ≈ {n}", "zh": "交叉点<br>N ≈ {n}"},
    "complexity.x": {"en": "sequence length N", "zh": "序列长度 N"},
    "complexity.y_time": {"en": "time (ms)", "zh": "时间 (ms)"},
    "complexity.y_memory": {"en": "extra peak memory (MiB)", "zh": "额外峰值内存 (MiB)"},
    "complexity.title": {"en": "Measured cost against N", "zh": "实测开销随 N 的变化"},
    "complexity.title_disturbed": {"en": "⚠ Measurement disturbed by other load: bars show the spread · {title}",
                                   "zh": "⚠ 测量受到其他负载干扰，误差棒为离散范围 · {title}"},
    "complexity.title_run": {"en": "Cost against N · d = {d}, {map} m = {m}, {causal}{status}",
                             "zh": "开销随 N 的变化 · d = {d}，{map} m = {m}，{causal}{status}"},
    "complexity.status_cancelled": {"en": " · cancelled", "zh": " · 已取消"},
    "complexity.status_budget": {"en": " · time budget reached", "zh": " · 已到时间预算"},
    "complexity.note_rate": {"en": "dense matmul in the same run: {rate} GFLOP/s", "zh": "同一次运行中的稠密矩阵乘：{rate} GFLOP/s"},
    # the claim
    "complexity.claim_softmax": {"en": "softmax (N×N)", "zh": "softmax（N×N）"},
    "complexity.claim_linear": {"en": "linear φ(Q)(φ(K)ᵀV)", "zh": "线性 φ(Q)(φ(K)ᵀV)"},
    "complexity.claim_y": {"en": "FLOPs per head", "zh": "每头 FLOPs"},
    "complexity.claim_x": {"en": "path", "zh": "路径"},
    "complexity.claim_title": {"en": "{ratio}× fewer FLOPs<br>N = {n}, d = {d}, one head",
                               "zh": "FLOPs 少 {ratio}×<br>N = {n}，d = {d}，单个头"},
    "complexity.claim_measured": {"en": "measured at N = {n}: softmax {q} ms, linear {l} ms ({ratio}× faster)",
                                  "zh": "N = {n} 时实测：softmax {q} ms，线性 {l} ms（快 {ratio}×）"},
    "complexity.claim_measured_slower": {"en": "measured at N = {n}: softmax {q} ms, linear {l} ms ({ratio}× slower)",
                                         "zh": "N = {n} 时实测：softmax {q} ms，线性 {l} ms（慢 {ratio}×）"},
    "complexity.claim_disturbed": {"en": " — measurement disturbed by other load", "zh": " —— 测量受到其他负载干扰"},
    # the summary
    "complexity.sum_claim": {"en": "**The article's claim** (N = {n}, d = {d}, m = d): softmax needs {q} FLOPs per "
                                   "head, linear attention {l}: **{ratio}× fewer** (the article says about 780×).",
                             "zh": "**文章的说法**（N = {n}，d = {d}，m = d）：softmax 每头需要 {q} FLOPs，线性注意力 "
                                   "{l}：**少 {ratio}×**（文章说约 780×）。"},
    "complexity.sum_measured": {"en": "Measured here at the largest N both ran (N = {n}): SDPA {q} ms, non-causal "
                                      "linear {l} ms, **{ratio}× faster** (FLOP ratio at that N: {flop}×).",
                                "zh": "这里在两者都跑过的最大 N（N = {n}）上实测：SDPA {q} ms，非因果线性 {l} ms，"
                                      "**快 {ratio}×**（该 N 下的 FLOP 比：{flop}×）。"},
    "complexity.sum_measured_slower": {"en": "Measured here at the largest N both ran (N = {n}): SDPA {q} ms, "
                                            "non-causal linear {l} ms, **{ratio}× slower** (FLOP ratio at that N: "
                                            "{flop}×).",
                                      "zh": "这里在两者都跑过的最大 N（N = {n}）上实测：SDPA {q} ms，非因果线性 {l} ms，"
                                            "**慢 {ratio}×**（该 N 下的 FLOP 比：{flop}×）。"},
    "complexity.sum_none": {"en": "No N where both SDPA and non-causal linear attention were measured: select both to "
                                  "compare.",
                            "zh": "没有哪个 N 上 SDPA 和非因果线性注意力都测过：两者都选上才能比较。"},
    "complexity.sum_slopes": {"en": "Fitted log-log slopes: {items}", "zh": "对数-对数拟合斜率：{items}"},
    "complexity.sum_cross": {"en": "Crossover: {text}.", "zh": "交叉点：{text}。"},
    "complexity.sum_disturbed": {"en": "**⚠ Measurement disturbed by other load** ({reasons}): the times below are "
                                       "not this machine's quiet speed; the plot shows each point's spread. Run again "
                                       "when the machine is idle.",
                                 "zh": "**⚠ 测量受到其他负载干扰**（{reasons}）：下面的时间不是本机空闲时的速度；"
                                       "图中标出了每个点的离散范围。请在机器空闲时再运行一次。"},
    "complexity.sum_cancelled": {"en": "⚠ Sweep cancelled: the plot shows what was measured before.",
                                 "zh": "⚠ 扫描已取消：图中是取消前测得的结果。"},
    "complexity.sum_budget": {"en": "⚠ Time budget ({s} s) reached: the largest runs were skipped.",
                              "zh": "⚠ 已到时间预算（{s} s）：最大的几次运行被跳过。"},
    "complexity.sum_how": {"en": "How this was measured", "zh": "测量方法"},
    "complexity.sep": {"en": ", ", "zh": "，"},
    "complexity.reason_sep": {"en": "; ", "zh": "；"},
    # the table of runs
    "complexity.col.method": {"en": "method", "zh": "方法"},
    "complexity.col.n": {"en": "N", "zh": "N"},
    "complexity.col.causal": {"en": "causal", "zh": "因果"},
    "complexity.col.time_ms": {"en": "time (ms, median)", "zh": "时间（ms，中位数）"},
    "complexity.col.time_min_ms": {"en": "fastest round (ms)", "zh": "最快一轮 (ms)"},
    "complexity.col.time_max_ms": {"en": "slowest round (ms)", "zh": "最慢一轮 (ms)"},
    "complexity.col.time_iqr_ms": {"en": "IQR (ms)", "zh": "四分位距 (ms)"},
    "complexity.col.gflops": {"en": "GFLOP/s", "zh": "GFLOP/s"},
    "complexity.col.peak_mem_bytes": {"en": "extra peak (bytes)", "zh": "额外峰值（字节）"},
    "complexity.col.flops": {"en": "FLOPs (model)", "zh": "FLOPs（模型）"},
    "complexity.col.skipped": {"en": "skipped because", "zh": "跳过原因"},
    # run-time messages of the tab
    "complexity.progress_matmul": {"en": "dense matmul: {rate} GFLOP/s", "zh": "稠密矩阵乘：{rate} GFLOP/s"},
    "complexity.progress_n": {"en": "N = {n} measured", "zh": "N = {n} 已测完"},
    "complexity.progress_done": {"en": "done", "zh": "完成"},
    "complexity.progress_rate": {"en": "measuring the dense matmul rate", "zh": "正在测量稠密矩阵乘速率"},
    "complexity.already": {"en": "A sweep of yours is already running: wait for it or cancel it.",
                           "zh": "你的一次扫描还在运行：请等它结束或取消它。"},
    "complexity.none_running": {"en": "No sweep is running.", "zh": "没有正在运行的扫描。"},
    "complexity.cancelling": {"en": "Cancelling: the sweep stops after the current measurement.",
                              "zh": "正在取消：当前这次测量结束后扫描就停止。"},
    "complexity.run_first": {"en": "Run the sweep first.", "zh": "请先运行扫描。"},
}
