"""The learn tab's run-time words: learned maps (Hedgehog, LUNA) and hybrid models."""

TEXT = {
    # maps as the tab names them
    "learn.map_hedgehog": {"en": "Hedgehog (trained)", "zh": "Hedgehog（已训练）"},
    "learn.map_luna": {"en": "LUNA (trained)", "zh": "LUNA（已训练）"},
    "learn.map_elu1": {"en": "elu+1", "zh": "elu+1"},
    "learn.map_favor_plus": {"en": "FAVOR+", "zh": "FAVOR+"},
    "learn.map_taylor2": {"en": "Taylor-2", "zh": "Taylor-2"},
    "learn.softmax_reference": {"en": "softmax (reference)", "zh": "softmax（参照）"},

    # where a result applies
    "learn.scope_all": {"en": "all {count} heads ({layers} layers × {heads})",
                        "zh": "全部 {count} 个头（{layers} 层 × {heads} 头）"},
    "learn.scope_layer": {"en": "layer {layer}, all {heads} heads", "zh": "第 {layer} 层的全部 {heads} 个头"},
    "learn.scope_one": {"en": "layer {layer}, head {head}", "zh": "第 {layer} 层第 {head} 个头"},

    # loss curve
    "learn.loss_legend": {"en": "training loss", "zh": "训练损失"},
    "learn.loss_hover": {"en": "step %{x}<br>loss %{y:.4f} nats", "zh": "第 %{x} 步<br>损失 %{y:.4f} nats"},
    "learn.loss_x": {"en": "training step (Adam)", "zh": "训练步数（Adam）"},
    "learn.loss_y": {"en": "row cross-entropy (nats)", "zh": "逐行交叉熵（nats）"},
    "learn.loss_title": {"en": "Training loss", "zh": "训练损失"},
    "learn.loss_title_live": {"en": "Training… loss so far", "zh": "训练中……目前的损失"},
    "learn.loss_title_run": {"en": "Training loss of {map} · {scope}, m = {m}",
                             "zh": "{map} 的训练损失 · {scope}，m = {m}"},
    "learn.loss_note": {"en": "{count} training texts · {seconds} s", "zh": "{count} 篇训练文本 · {seconds} 秒"},

    # held-out comparison
    "learn.cmp_kl": {"en": "held-out KL(A‖Â) (nats)", "zh": "留出集 KL(A‖Â)（nats）"},
    "learn.cmp_entropy": {"en": "row entropy (nats)", "zh": "行熵（nats）"},
    "learn.cmp_mono": {"en": "Spearman ρ(logit, weight)", "zh": "Spearman ρ（logit 与权重）"},
    "learn.cmp_sub_kl": {"en": "Error: KL to softmax", "zh": "误差：到 softmax 的 KL"},
    "learn.cmp_sub_entropy": {"en": "Spikiness: entropy", "zh": "尖锐程度：熵"},
    "learn.cmp_sub_mono": {"en": "Monotone in the logit", "zh": "随 logit 单调"},
    "learn.cmp_softmax_line": {"en": "softmax {value}", "zh": "softmax {value}"},
    "learn.cmp_x": {"en": "feature map", "zh": "特征映射"},
    "learn.cmp_title": {"en": "Held-out texts: how close to softmax?", "zh": "留出文本：离 softmax 有多近？"},
    "learn.cmp_title_run": {"en": "Held-out texts only ({count}) · {scope}", "zh": "只用留出文本（{count} 篇）· {scope}"},
    "learn.cmp_subtitle_boxes": {"en": "each box: the spread over heads, one point per head",
                                 "zh": "每个箱形：各头之间的分布，一个点代表一个头"},

    # per-head ratio
    "learn.ratio_colorbar": {"en": "KL(elu+1) /<br>KL({map})<br>(×)", "zh": "KL(elu+1) /<br>KL({map})<br>（倍）"},
    "learn.ratio_title": {"en": "How many times closer {map} is than elu+1, per head",
                          "zh": "每个头上 {map} 比 elu+1 接近多少倍"},
    "learn.ratio_note": {"en": "ratio of held-out KL(A‖Â); above 1: the learned map is closer to softmax",
                         "zh": "留出集 KL(A‖Â) 之比；大于 1 表示学到的映射更接近 softmax"},
    "learn.ratio_hover": {"en": "layer %{y}, head %{x}<br>KL ratio %{z:.3g}×",
                          "zh": "第 %{y} 层，第 %{x} 个头<br>KL 之比 %{z:.3g} 倍"},
    "learn.head": {"en": "head", "zh": "头"},
    "learn.layer": {"en": "layer", "zh": "层"},

    # cost against error
    "learn.trade_title": {"en": "Cost against error: features m and held-out median row KL",
                          "zh": "代价与误差：特征数 m 与留出集逐行 KL 中位数"},
    "learn.trade_x": {"en": "features m (work per token grows with m)", "zh": "特征数 m（每个词元的计算量随 m 增长）"},
    "learn.trade_y": {"en": "median row KL(A‖Â) (nats, log scale)", "zh": "逐行 KL(A‖Â) 中位数（nats，对数刻度）"},
    "learn.trade_note": {"en": "lower is closer to softmax; further left is cheaper",
                         "zh": "越低越接近 softmax；越靠左越省算力"},
    "learn.trade_hover": {"en": "m = %{x}<br>median row KL %{y:.3g} nats", "zh": "m = %{x}<br>逐行 KL 中位数 %{y:.3g} nats"},

    # table headers
    "learn.col_map": {"en": "map", "zh": "映射"},
    "learn.col_m": {"en": "features m", "zh": "特征数 m"},
    "learn.col_kl": {"en": "held-out KL, mean (nats)", "zh": "留出集 KL 均值（nats）"},
    "learn.col_kl_median": {"en": "held-out KL, median row (nats)", "zh": "留出集逐行 KL 中位数（nats）"},
    "learn.col_entropy": {"en": "entropy (nats)", "zh": "熵（nats）"},
    "learn.col_mono": {"en": "monotonicity (Spearman ρ)", "zh": "单调性（Spearman ρ）"},

    # summary and status lines
    "learn.summary_trained": {
        "en": "Trained {map} on **{count} training texts** for {steps} steps ({seconds} s, seed {seed}); loss: row "
              "cross-entropy, {first} → {last} nats.",
        "zh": "{map} 在 **{count} 篇训练文本**上训练了 {steps} 步（{seconds} 秒，种子 {seed}）；损失为逐行交叉熵，"
              "从 {first} 降到 {last} nats。"},
    "learn.summary_loaded": {"en": "Loaded {map} from **{origin}** (no training curve).",
                             "zh": "从 **{origin}** 载入了 {map}（没有训练曲线）。"},
    "learn.summary_eval": {
        "en": "Evaluated on **{count} held-out texts only**, {scope}. Closest to softmax: **{best}** (mean KL {kl} nats; "
              "softmax entropy {entropy} nats). Median row KL of elu+1 over {map}'s: **{ratio}×**.",
        "zh": "只在 **{count} 篇留出文本**上评估，{scope}。最接近 softmax 的是 **{best}**（KL 均值 {kl} nats；"
              "softmax 的熵为 {entropy} nats）。elu+1 与 {map} 的逐行 KL 中位数之比：**{ratio} 倍**。"},
    "learn.live": {"en": "Training {map}… step {step} of {total}, loss {loss} nats",
                   "zh": "正在训练 {map}……第 {step} 步（共 {total} 步），损失 {loss} nats"},
    "learn.starting": {"en": "Reading the texts through the model…", "zh": "正在让模型读取文本……"},
    "learn.rival": {"en": "then Hedgehog with the same settings, for the comparison",
                    "zh": "随后用同样的设置训练 Hedgehog 作对比"},
    "learn.stopped": {"en": "⏹ Training stopped; nothing was kept. Press Train to start again.",
                      "zh": "⏹ 训练已停止，结果没有保留。按“训练”重新开始。"},
    "learn.session_note": {
        "en": "Only this browser session sees the map: the maps and quality tabs offer it as **{map}** on {scope}.",
        "zh": "只有当前这个浏览器会话能看到这个映射：注意力图和特征映射质量两页会在{scope}上提供 **{map}**。"},
    "learn.status_none": {
        "en": "**Trained map for the hybrid:** none yet. Train \"all {count} heads\" above (one head is not enough: a "
              "linear layer needs a map for each of its heads), or load a saved all-heads map.",
        "zh": "**混合模型用的已训练映射：** 还没有。请在上方训练“全部 {count} 个头”（只训练一个头不够：一层改成线性，"
              "它的每个头都要有映射），或载入保存好的全部头的映射。"},
    "learn.status_ready": {"en": "**{map}:** ready — {count} heads, m = {m} ({origin}). Choose it below.",
                           "zh": "**{map}：** 已就绪，共 {count} 个头，m = {m}（{origin}）。可在下方选择。"},
    "learn.origin_trained": {"en": "trained here, {steps} steps", "zh": "在此训练，{steps} 步"},
    "learn.no_map_title": {"en": "No trained map", "zh": "还没有训练好的映射"},
    "learn.no_map": {
        "en": "No trained {map} for every head yet. Train \"all {count} heads\" in part 1 (or load a saved all-heads "
              "map), then run the hybrid.",
        "zh": "还没有覆盖全部头的已训练 {map}。请先在第 1 部分训练“全部 {count} 个头”（或载入保存好的全部头的映射），"
              "再运行混合模型。"},
    "learn.summary_model": {"en": "Model: **{model}**.", "zh": "模型：**{model}**。"},
    "learn.summary_causal": {
        "en": "Model: **{model}**, causal: its maps are trained and judged against its causal softmax (key j ≤ query i).",
        "zh": "模型：**{model}**，因果注意力：映射按它的因果 softmax（键 j ≤ 查询 i）来训练和评估。"},
    "learn.all_heads": {"en": "all {count} heads", "zh": "全部 {count} 个头"},

    # the model that reads the texts
    "learn.err_model": {
        "en": "model: {model} cannot be read here: it is unknown, not installed, or not allowed on this server; "
              "choose {choices}.",
        "zh": "模型：这里无法使用 {model}：它不是已知的模型、没有安装，或本服务器不允许；请选择 {choices}。"},
    "learn.choice_sep": {"en": ", ", "zh": "、"},
    "learn.err_minilm_hybrid": {
        "en": "model: hybrids run on the embedded {embedded} only, not on {model}; choose {embedded} to run one.",
        "zh": "模型：混合模型只支持内置的 {embedded}，不支持 {model}；请选择 {embedded} 再运行。"},
    "learn.err_minilm_shipped": {
        "en": "model: the shipped maps were trained on the embedded {embedded}, not on {model}; choose {embedded}, or "
              "train a map on this model.",
        "zh": "模型：随应用附带的映射是在内置的 {embedded} 上训练的，不是 {model}；请选择 {embedded}，或在这个模型上训练一个映射。"},
    "learn.err_file_model": {
        "en": "file: the map was trained on {have}, not on {want}; choose {have}, or train a map on {want}.",
        "zh": "文件：这个映射是在 {have} 上训练的，不是 {want}；请选择 {have}，或在 {want} 上训练一个映射。"},
    "learn.err_trained_model": {
        "en": "the trained {name} was trained on {have}, but {want} read this sample; train one on {want} in the learn "
              "tab",
        "zh": "训练好的 {name} 是在 {have} 上训练的，而这个样本由 {want} 读取；请在“可学习映射”标签页用 {want} 训练一个"},

    "learn.bad_mode": {"en": "mode: choose chosen layers or greedy.", "zh": "模式：请选择“指定层”或“贪心”。"},
    "learn.no_layers": {"en": "layers: tick at least one layer to make linear, or choose greedy.",
                        "zh": "层：至少勾选一层改为线性，或者选择“贪心”。"},

    # hybrid figures and table
    "learn.hyb_none": {"en": "none", "zh": "无"},
    "learn.hyb_point": {"en": "softmax: {layers}", "zh": "softmax：{layers}"},
    "learn.hyb_mean": {"en": "mean over texts", "zh": "各文本平均"},
    "learn.hyb_hover": {"en": "k = %{x} softmax layers<br>mean cosine %{y:.4f}<br>worst text %{customdata[0]:.4f}",
                        "zh": "k = %{x} 个 softmax 层<br>平均余弦 %{y:.4f}<br>最差文本 %{customdata[0]:.4f}"},
    "learn.hyb_original": {"en": "original model", "zh": "原模型"},
    "learn.hyb_x": {"en": "k = softmax layers kept (the others linear)", "zh": "k = 保留的 softmax 层数（其余为线性）"},
    "learn.hyb_y": {"en": "embedding cosine<br>to the original (1 = same)", "zh": "与原模型嵌入的<br>余弦相似度（1 = 相同）"},
    "learn.hyb_title": {"en": "Hybrid with {map}: how much of the model survives",
                        "zh": "用 {map} 的混合模型：原模型还剩多少"},
    "learn.hyb_note": {"en": "points: mean over the held-out texts; whiskers reach down to the worst text",
                       "zh": "点：留出文本上的平均；须线向下延伸到最差的那篇文本"},
    "learn.drift_linear": {"en": "linear ({map})", "zh": "线性（{map}）"},
    "learn.drift_softmax": {"en": "softmax", "zh": "softmax"},
    "learn.drift_hover": {"en": "layer %{x}<br>drift %{y:.4f}", "zh": "第 %{x} 层<br>漂移 %{y:.4f}"},
    "learn.drift_y": {"en": "attention drift<br>(mean row total variation, 0–1)",
                      "zh": "注意力漂移<br>（逐行全变差的平均，0–1）"},
    "learn.drift_legend": {"en": "attention in this layer", "zh": "这一层的注意力"},
    "learn.drift_title": {"en": "Attention drift per layer · linear: {layers}", "zh": "各层注意力漂移 · 线性层：{layers}"},
    "learn.hyb_summary": {
        "en": "{map} in layers **{linear}**, softmax kept in **{kept}**: mean embedding cosine to the original "
              "**{mean}** (worst text {worst}) over {count} held-out texts · {seconds} s.",
        "zh": "第 **{linear}** 层用 {map}，第 **{kept}** 层保留 softmax：在 {count} 篇留出文本上，与原模型嵌入的平均余弦"
              "为 **{mean}**（最差文本 {worst}）· {seconds} 秒。"},
    "learn.col_k": {"en": "softmax layers k", "zh": "softmax 层数 k"},
    "learn.col_kept": {"en": "softmax layers", "zh": "softmax 层"},
    "learn.col_linear": {"en": "linear layers ({map})", "zh": "线性层（{map}）"},
    "learn.col_cos_mean": {"en": "mean cosine", "zh": "平均余弦"},
    "learn.col_cos_min": {"en": "worst cosine", "zh": "最差余弦"},
}
