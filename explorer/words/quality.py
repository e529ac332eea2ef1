"""The quality tab's words: error against m, the norms and the m FAVOR+ needs, the head
overview and its table, the notices and errors of the view."""

TEXT = {
    # the view
    "quality.err_seeds": {"en": "seeds: choose between 1 and 50 redraws, got {seeds}",
                          "zh": "种子数：请在 1 到 50 次重抽之间选择，收到的是 {seeds}"},
    "quality.err_maps": {"en": "maps: choose at least one random-feature map (FAVOR+, trig RFF)",
                         "zh": "映射：请至少选一个随机特征映射（FAVOR+、trig RFF）"},
    "quality.err_ms": {"en": "ms: feature counts must be at least 1, got {ms}", "zh": "ms：特征数至少为 1，收到的是 {ms}"},
    "quality.err_cells": {"en": "N: {cells} attention cells is over this tab's cap of {cap} (N = 2048 for one head); "
                                "pick one head or a shorter sequence",
                          "zh": "N：{cells} 个注意力单元超过本页上限 {cap}（单个头时 N = 2048）；请选单个头或更短的序列"},
    "quality.err_work": {"en": "quality: N = {n} with {seeds} seeds is too much work for one request; lower N or the "
                               "seeds",
                         "zh": "质量：N = {n}、{seeds} 个种子的计算量对一次请求来说太大；请减小 N 或种子数"},
    "quality.grid_cut": {"en": "At N = {n} the m grid stops at {top} (not {asked}) to keep the request to a few "
                               "seconds; a shorter sequence measures further.",
                         "zh": "N = {n} 时 m 的网格止于 {top}（而不是 {asked}），好让请求在几秒内完成；序列更短时能测得更远。"},
    "quality.progress_step": {"en": "{label}, m = {m}", "zh": "{label}，m = {m}"},
    "quality.seed_note": {"en": "{seeds} redraws per m", "zh": "每个 m 重抽 {seeds} 次"},
    "quality.seed_note_one": {"en": "1 redraw per m", "zh": "每个 m 抽 1 次"},
    "quality.seed_note_upto": {"en": " up to {m}", "zh": "（m ≤ {m}）"},
    "quality.seed_note_then": {"en": ", then {items}", "zh": "，之后 {items}"},
    "quality.seed_note_item": {"en": "{count} at {m}", "zh": "m = {m} 时 {count} 次"},
    "quality.seed_note_sep": {"en": ", ", "zh": "，"},
    "quality.err_metric": {"en": "metric: unknown {metric}; choose from {choices}",
                           "zh": "指标：没有 {metric} 这个指标；可选 {choices}"},
    "quality.err_softmax": {"en": "map: choose an approximation, not softmax itself",
                            "zh": "映射：请选一个近似，而不是 softmax 本身"},
    "quality.err_overview_cells": {"en": "N: the overview of {heads} heads at N = {n} is {cells} attention cells, "
                                         "over the cap of {cap}; use a shorter text",
                                   "zh": "N：N = {n} 时 {heads} 个头的总览共 {cells} 个注意力单元，超过上限 {cap}；"
                                         "请用更短的文本"},
    # the curves
    "quality.curves_title": {"en": "Random features: error against m", "zh": "随机特征：误差随 m 的变化"},
    "quality.curves_title_cost": {"en": "Random features: error against cost", "zh": "随机特征：误差随计算量的变化"},
    "quality.kernel_panel": {"en": "Kernel estimate φ(q)·φ(k) vs exp(s)", "zh": "核估计 φ(q)·φ(k) 对比 exp(s)"},
    "quality.map_panel": {"en": "Attention map ‖Â − A‖/‖A‖", "zh": "注意力图 ‖Â − A‖/‖A‖"},
    "quality.measured": {"en": "{label} (measured)", "zh": "{label}（实测）"},
    "quality.theory": {"en": "{label} (theory, IID)", "zh": "{label}（理论，IID）"},
    "quality.hover_mean": {"en": "mean", "zh": "均值"},
    "quality.hover_theory": {"en": "theory", "zh": "理论"},
    "quality.x_flops": {"en": "linear-path FLOPs per head", "zh": "每头线性路径 FLOPs"},
    "quality.x_m": {"en": "number of features m", "zh": "特征数 m"},
    "quality.y_mse": {"en": "relative MSE", "zh": "相对 MSE"},
    "quality.y_error": {"en": "relative error", "zh": "相对误差"},
    "quality.need_marker": {"en": " FAVOR+ (IID): {target} at m ≈ {m}", "zh": " FAVOR+（IID）：m ≈ {m} 时误差 {target}"},
    "quality.need_beyond": {"en": "FAVOR+ (IID) would need m ≈ {m} features for {target} error on the median (q, k) "
                                  "pair of this head (|q′+k′|² ≈ {u2}): far beyond m = {top}, so its curves stay flat "
                                  "here.",
                            "zh": "要让本头中位数的 (q, k) 对误差降到 {target}，FAVOR+（IID）需要 m ≈ {m} 个特征"
                                  "（|q′+k′|² ≈ {u2}），远超 m = {top}，所以这里它的曲线平坦不降。"},
    "quality.curves_note": {"en": "Mean over the redraws ({seeds}) with a 10–90 % band. Dashed: the IID theory (an "
                                  "expectation; with heavy-tailed estimates a finite set of seeds usually lands below "
                                  "it). Orthogonal features have no closed form here.",
                            "zh": "曲线为多次重抽的均值（{seeds}），阴影为 10–90 % 区间。虚线：IID 理论值（一个期望；"
                                  "估计量重尾时，有限个种子的结果通常落在它下方）。正交特征在这里没有闭式解。"},
    # the norms
    "quality.norm_q": {"en": "‖q′‖ (queries)", "zh": "‖q′‖（查询）"},
    "quality.norm_k": {"en": "‖k′‖ (keys)", "zh": "‖k′‖（键）"},
    "quality.norm_rows": {"en": "rows", "zh": "行"},
    "quality.norm_x": {"en": "norm after scaling by d^¼ (the kernel is exp(q′·k′))",
                       "zh": "除以 d^¼ 之后的范数（核为 exp(q′·k′)）"},
    "quality.norm_y": {"en": "rows", "zh": "行数"},
    "quality.norm_note": {"en": "The IID FAVOR+ estimate of one pair has relative variance (exp(|q′+k′|²) − 1) / m. "
                                "Here the median pair has |q′+k′|² ≈ {u2}, so {target} relative error needs m ≈ {m} "
                                "features (10–90 % of pairs: {lo} to {hi}). Norms near 1 need hundreds; trained heads "
                                "have large norms.",
                          "zh": "IID FAVOR+ 对一对 (q, k) 的估计，相对方差为 (exp(|q′+k′|²) − 1) / m。这里中位数的一对"
                                "有 |q′+k′|² ≈ {u2}，要达到 {target} 的相对误差需要 m ≈ {m} 个特征（10–90 % 的对："
                                "{lo} 到 {hi}）。范数接近 1 时需要几百个；训练过的头范数都很大。"},
    "quality.norm_title": {"en": "FAVOR+ needs m ≈ {m} for {target} error", "zh": "FAVOR+ 要达到 {target} 的误差需 m ≈ {m}"},
    # the head overview
    "quality.overview_title": {"en": "{map}: {metric} on every head", "zh": "{map}：每个头上的{metric}"},
    "quality.overview_note": {"en": "Click a cell (or a row of the table) to open that head in the maps tab.",
                              "zh": "点一个格子（或表中的一行），即在注意力图标签页中打开那个头。"},
    "quality.overview_layer": {"en": "layer {i}", "zh": "第 {i} 层"},
    "quality.overview_hover": {"en": "layer %{y}, head %{x}", "zh": "第 %{y} 层，第 %{x} 头"},
    "quality.overview_needs_heads": {"en": "The head overview needs several heads: use a text (72 heads) or an upload "
                                           "with heads.",
                                     "zh": "各头总览需要多个头：请用文本（72 个头）或上传含多个头的数据。"},
    "quality.overview_progress": {"en": "every head", "zh": "所有头"},
    # the tab's titles and messages
    "quality.bars_title": {"en": "Spiky and monotone like softmax, or flat?", "zh": "像 softmax 一样尖锐且单调，还是平坦？"},
    "quality.measure_first": {"en": "Measure first.", "zh": "请先测量。"},
}
