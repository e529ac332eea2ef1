"""The maps tab's words: the grid of heatmaps, its notices and errors, the badge, the
entropy and monotonicity bars (drawn in the quality tab too)."""

TEXT = {
    # the view
    "maps.err_no_maps": {"en": "maps: choose at least one map", "zh": "映射：请至少选一个映射"},
    "maps.err_cells": {"en": "N: {cells} attention cells (N = {n}) is over this tab's cap of {cap} (N = 2048 for one "
                             "head); pick one head or a shorter sequence (the complexity tab times long sequences)",
                       "zh": "N：{cells} 个注意力单元（N = {n}）超过本页上限 {cap}（单个头时 N = 2048）；"
                             "请选单个头或更短的序列（长序列请到“复杂度”标签页计时）"},
    "maps.not_shown": {"en": "{label}: not shown ({why}).", "zh": "{label}：未显示（{why}）。"},
    "maps.no_spread": {"en": "{label}: shown for one seed only, without the spread over {k} seeds ({why}).",
                       "zh": "{label}：只显示一个种子，没有 {k} 个种子上的离散程度（{why}）。"},
    "maps.block_note": {"en": "N = {n}: each cell is the mean of a {block}×{block} block ({side}×{side} shown); the "
                              "metrics table uses the full maps.",
                        "zh": "N = {n}：每格是一个 {block}×{block} 块的均值（显示 {side}×{side}）；指标表用的是完整的图。"},
    # the grid
    "maps.title": {"en": "Attention maps", "zh": "注意力图"},
    "maps.key": {"en": "key", "zh": "键"},
    "maps.query": {"en": "query", "zh": "查询"},
    "maps.hover_map": {"en": "query: %{y}<br>key: %{x}<br>approx: %{z:.4g}<br>softmax: %{customdata[0]:.4g}"
                             "<br>difference: %{customdata[1]:+.3g}",
                       "zh": "查询：%{y}<br>键：%{x}<br>近似：%{z:.4g}<br>softmax：%{customdata[0]:.4g}"
                             "<br>差：%{customdata[1]:+.3g}"},
    "maps.hover_err": {"en": "query: %{y}<br>key: %{x}<br>difference: %{z:+.3g}",
                       "zh": "查询：%{y}<br>键：%{x}<br>差：%{z:+.3g}"},
    "maps.ill_rows": {"en": "{name}  ⚠ {count} ill-defined rows", "zh": "{name}  ⚠ {count} 个病态行"},
    "maps.own_scale": {"en": " · own scale ±{range}", "zh": " · 独立色标 ±{range}"},
    "maps.bar_weight": {"en": "attention<br>weight", "zh": "注意力<br>权重"},
    "maps.bar_error": {"en": "approx −<br>softmax", "zh": "近似 −<br>softmax"},
    "maps.spread_note": {"en": "Random features, map error: {items}.", "zh": "随机特征的注意力图误差：{items}。"},
    "maps.spread_item": {"en": "{name} {single} with seed {seed}; mean ± sd over {k} seeds {mean} ± {sd}",
                         "zh": "{name} 在种子 {seed} 下为 {single}，{k} 个种子的均值 ± 标准差为 {mean} ± {sd}"},
    "maps.spread_sep": {"en": "; ", "zh": "；"},
    # the table beside the grid
    "maps.spread_column": {"en": "map err, {k} seeds", "zh": "图误差（{k} 个种子）"},
    "maps.spread_help": {"en": "the map error of a random-feature map over draws of its features (the seed chosen "
                               "and the next {more}); the row's other numbers are the chosen seed's.",
                         "zh": "随机特征映射在多次特征抽取（所选种子及其后 {more} 个）上的注意力图误差；"
                               "该行其余数值都来自所选种子这一次抽取。"},
    # the badge
    "maps.badge_ok": {"en": "✓ Recomputed softmax(QKᵀ/√d) matches the model's own attention (max |difference| = "
                            "{diff}).",
                      "zh": "✓ 重新计算的 softmax(QKᵀ/√d) 与模型自己的注意力一致（最大 |差| = {diff}）。"},
    "maps.badge_bad": {"en": "✗ Recomputed softmax(QKᵀ/√d) does NOT match the model's own attention (max "
                             "|difference| = {diff}).",
                       "zh": "✗ 重新计算的 softmax(QKᵀ/√d) 与模型自己的注意力不一致（最大 |差| = {diff}）。"},
    # run-time messages of the tab
    "maps.progress": {"en": "computing the maps and their metrics", "zh": "正在计算注意力图及其指标"},
    "maps.draw_first": {"en": "Draw the maps first.", "zh": "请先画出注意力图。"},
    # the entropy and monotonicity bars
    "maps.bars_title": {"en": "Spiky and monotone like softmax, or flat?", "zh": "像 softmax 一样尖锐且单调，还是平坦？"},
    "maps.bars_entropy": {"en": "Entropy per row (nats, mean)", "zh": "每行的熵（nats，平均）"},
    "maps.bars_mono": {"en": "Monotonicity (Spearman ρ)", "zh": "单调性（Spearman ρ）"},
    "maps.bars_entropy_axis": {"en": "entropy (nats)", "zh": "熵 (nats)"},
    "maps.bars_mono_axis": {"en": "Spearman ρ(logit, weight)", "zh": "Spearman ρ(logit, 权重)"},
    "maps.bars_map_axis": {"en": "map", "zh": "映射"},
    "maps.bars_entropy_name": {"en": "entropy of the map", "zh": "映射的熵"},
    "maps.bars_mono_name": {"en": "monotonicity", "zh": "单调性"},
    "maps.bars_na_hover": {"en": "{name}: no value", "zh": "{name}：没有值"},
    "maps.bars_spread": {"en": "mean ± sd over {k} seeds", "zh": "{k} 个种子的均值 ± 标准差"},
    "maps.bars_note": {"en": "Bars: one draw (seed {seed}). Diamonds on random-feature maps: mean ± sd over {k} seeds.",
                       "zh": "柱：一次抽取（种子 {seed}）。随机特征映射上的菱形：{k} 个种子的均值 ± 标准差。"},
}
