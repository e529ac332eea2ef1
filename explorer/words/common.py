"""Words shared by every tool tab: metric names, map names, the notices and errors the
shared views write, and the messages of the page itself (toasts, their titles)."""

# Catalogue labels whose words are translated (the rest are names: softmax, elu+1, FAVOR+ ...).
NAME_KEYS = {"identity (q·k)": "common.name.identity", "sliding window": "common.name.sliding_window",
             "Hedgehog (untrained: W = I)": "common.name.hedgehog_untrained",
             "Hedgehog (trained)": "common.name.hedgehog_trained",
             "LUNA (untrained: FAVOR+ start)": "common.name.luna_untrained",
             "LUNA (trained)": "common.name.luna_trained"}


def map_name(label, lang: str = "en") -> str:
    """A catalogue label as the page shows it in ``lang``: "FAVOR+ (orthogonal)" is
    "FAVOR+（正交）" in Chinese; names themselves stay as they are."""
    from . import normal_lang, w       # this module is loaded while the package gathers its words

    label = str(label)
    if normal_lang(lang) == "en":
        return label
    if label in NAME_KEYS:
        return w(NAME_KEYS[label], lang)
    for suffix, word in ((" (orthogonal)", w("common.orthogonal", lang)), (" (IID)", "IID")):
        if label.endswith(suffix):
            return f"{label[:-len(suffix)]}（{word}）"
    return label


TEXT = {
    "common.layer": {"en": "layer", "zh": "层"},
    "common.head": {"en": "head", "zh": "头"},
    "common.tokens": {"en": "tokens", "zh": "词元"},
    "common.map": {"en": "map", "zh": "映射"},
    "common.value": {"en": "value", "zh": "数值"},
    "common.where_head": {"en": "layer {layer}, head {head}", "zh": "第 {layer} 层第 {head} 头"},
    "common.where_mean": {"en": "layer {layer}, mean over heads", "zh": "第 {layer} 层，各头平均"},
    "common.causal": {"en": "causal", "zh": "因果"},
    "common.non_causal": {"en": "non-causal", "zh": "非因果"},
    "common.sample": {"en": "sample", "zh": "样本"},
    "common.yes": {"en": "yes", "zh": "是"},
    "common.no": {"en": "no", "zh": "否"},

    # where the sample came from, as the titles name it
    "common.source_text": {"en": "{model}, {n} tokens", "zh": "{model}，{n} 个词元"},
    "common.source_random": {"en": "random '{preset}', N={n}, d={d}, heads={heads}, seed={seed}",
                             "zh": "随机数据（{preset}），N={n}，d={d}，{heads} 个头，种子 {seed}"},
    "common.source_arrays": {"en": "uploaded arrays, N={n}, d={d}, heads={heads}",
                             "zh": "上传的数组，N={n}，d={d}，{heads} 个头"},

    "common.preset.gaussian": {"en": "gaussian", "zh": "高斯"},
    "common.preset.clustered": {"en": "clustered", "zh": "成簇"},
    "common.preset.local": {"en": "local", "zh": "局部"},
    "common.preset.needle": {"en": "needle", "zh": "大海捞针"},

    # notices of the shared views
    "common.no_layer": {"en": "Layer {asked} does not exist here (0..{last}); showing layer {used}.",
                        "zh": "这里没有第 {asked} 层（只有 0..{last}），改为显示第 {used} 层。"},
    "common.no_head": {"en": "Head {asked} does not exist here (0..{last}); showing head {used}.",
                       "zh": "这里没有第 {asked} 头（只有 0..{last}），改为显示第 {used} 头。"},
    "common.seed_reduced": {"en": "The {name} {shown} is outside 0..{top}; using it modulo 2^32 = {reduced}.",
                            "zh": "{name} {shown} 超出 0..{top}，改用它对 2^32 取模的值 {reduced}。"},
    "common.feature_seed": {"en": "feature seed", "zh": "特征随机种子"},
    "common.m_rounded": {"en": "{label}: m rounded up from {m} to {m2} (features come in cos/sin pairs).",
                         "zh": "{label}：m 从 {m} 向上取整为 {m2}（特征按 cos/sin 成对出现）。"},

    # the sources' notices, said in the page's language (explorer.sources writes them in English)
    "common.src_truncated": {"en": "Text truncated: dropped the last {dropped} of {total} tokens; kept {kept} (limit "
                                   "{limit} tokens from {why}, {special} of them special).",
                             "zh": "文本已截断：{total} 个词元中丢掉了最后 {dropped} 个，保留 {kept} 个"
                                   "（上限 {limit} 个词元，来自{why}，其中 {special} 个是特殊词元）。"},
    "common.src_limit_model": {"en": "the model's position limit", "zh": "模型的位置上限"},
    "common.src_limit_max": {"en": "max_tokens", "zh": " max_tokens 设置"},
    "common.src_special": {"en": "Special tokens dropped from the display ({tokens}). The model still read them, so "
                                 "Q, K, V are computed in their presence; the model's attention rows are restricted to "
                                 "the {kept} kept tokens and renormalised to sum to 1 (the softmax over kept keys "
                                 "only).",
                           "zh": "显示中去掉了特殊词元（{tokens}）。模型仍然读了它们，所以 Q、K、V 是在它们在场时算出的；"
                                 "模型的注意力行只保留这 {kept} 个词元，并重新归一化为和为 1（只在保留的键上做 softmax）。"},
    "common.src_not_sdpa": {"en": "softmax(q k^T / sqrt(d)) differs from the model's own attention by up to {error}: "
                                  "this model's attention is not plain scaled dot-product attention.",
                            "zh": "softmax(q k^T / sqrt(d)) 与模型自己的注意力最多相差 {error}：这个模型的注意力不是"
                                  "普通的缩放点积注意力。"},
    "common.src_rescaled": {"en": "This model does not scale logits by 1/sqrt(d) (per-layer scales: {scales}); q is "
                                  "rescaled so that it does.",
                            "zh": "这个模型没有把 logits 除以 sqrt(d)（各层的缩放：{scales}）；已重新缩放 q，使之成立。"},
    "common.src_no_v": {"en": "v: not given, so values are random N(0, 1) with seed {seed}; they affect outputs only, "
                              "not the attention map.",
                        "zh": "v：未提供，因此值取随机 N(0, 1)（种子 {seed}）；它们只影响输出，不影响注意力图。"},
    "common.src_integer": {"en": "{name}: integer array ({dtype}) converted to float32.",
                           "zh": "{name}：整数数组（{dtype}）已转换为 float32。"},
    "common.src_ignored": {"en": "Ignored arrays other than q, k, v: {names}.", "zh": "已忽略 q、k、v 以外的数组：“{names}”。"},

    # errors of the shared views (one sentence naming the parameter and its range)
    "common.err_unknown_map": {"en": "maps: unknown map {label}; choose from {choices}",
                               "zh": "映射：没有名为 {label} 的映射；可选 {choices}"},
    "common.err_m_small": {"en": "m: the number of features must be at least 1, got {m}",
                           "zh": "m：特征数至少为 1，收到的是 {m}"},
    "common.err_window": {"en": "window: must be 0 or more keys, got {window}",
                          "zh": "窗口：必须是 0 或更多个键，收到的是 {window}"},
    "common.err_no_trained": {"en": "no {name} trained yet in this session: train one (or load a saved map) in the "
                                    "learn tab",
                              "zh": "本次会话还没有训练好的 {name}：请先在“可学习映射”标签页训练一个（或载入保存的映射）"},
    "common.err_trained_dim": {"en": "the trained {name} is for head dimension {have}, this sample's is {want}",
                               "zh": "训练好的 {name} 对应头维度 {have}，而此样本的头维度是 {want}"},
    "common.err_trained_heads": {"en": "the trained {name} covers {layers} layers × {heads} heads; {asked} is not "
                                       "among them",
                                 "zh": "训练好的 {name} 覆盖 {layers} 层 × {heads} 头，其中没有{asked}"},
    "common.err_trained_layer": {"en": "it was trained on the {heads} heads of layer {layer}; {asked} is not among "
                                       "them. Train this head in the learn tab",
                                 "zh": "它是在第 {layer} 层的 {heads} 个头上训练的，其中没有{asked}。请在“可学习映射”"
                                       "标签页训练这个头"},
    "common.err_trained_head": {"en": "it was trained on {trained_on} only ({origin}); this is {asked}. Train this "
                                      "head in the learn tab",
                                "zh": "它只在{trained_on}上训练过（{origin}）；这里是{asked}。请在“可学习映射”标签页"
                                      "训练这个头"},
    # Where a session's learned map came from: trained here, or a file (its name is kept as it is).
    "common.origin_trained": {"en": "trained here", "zh": "在此训练"},
    "common.origin_uploaded": {"en": "uploaded", "zh": "上传的文件"},
    "common.err_trained_shape": {"en": "the trained {name} covers heads {heads}; expected one head, one layer or "
                                       "layers × heads",
                                 "zh": "训练好的 {name} 覆盖的头是 {heads}；应为单个头、一整层或“层 × 头”"},
    # what a link could not hold, as the page says it on load
    "common.link_outside": {"en": "Link parameter {name} = {value} is outside {lo}..{hi}; using {fixed}.",
                            "zh": "链接参数 {name} = {value} 超出 {lo}..{hi}，改用 {fixed}。"},
    "common.link_invalid": {"en": "Link parameter {name}={raw} is not {allowed}; using {using}.",
                            "zh": "链接参数 {name}={raw} 不是{allowed}，改用{using}。"},
    "common.link_unreadable": {"en": "Link parameter {name}={raw} is not a valid {kind}; ignored.",
                               "zh": "链接参数 {name}={raw} 不是有效的 {kind}，已忽略。"},
    "common.link_default": {"en": "the default", "zh": "默认值"},
    "common.link_whole_range": {"en": "a whole number from {lo} to {hi}", "zh": " {lo} 到 {hi} 之间的整数"},
    "common.link_number_range": {"en": "a number from {lo} to {hi}", "zh": " {lo} 到 {hi} 之间的数"},
    "common.link_one_of": {"en": "one of {names}", "zh": "以下之一：{names}"},
    "common.link_whole_at_least": {"en": "a whole number of at least {lo}", "zh": "不小于 {lo} 的整数"},
    "common.link_number_at_least": {"en": "a number of at least {lo}", "zh": "不小于 {lo} 的数"},
    "common.link_text_at_most": {"en": "text of at most {n} characters", "zh": "不超过 {n} 个字符的文本"},
    "common.link_list_of": {"en": "a list of values from {names}", "zh": "取自以下各值的列表：{names}"},
    "common.link_number_or_word": {"en": "a whole number or a word of at most {n} characters",
                                   "zh": "整数，或不超过 {n} 个字符的词"},
    "common.link_true_false": {"en": "true or false", "zh": " true 或 false"},
    "common.refusal_must": {"en": "{name} must be {allowed}; got {got}.", "zh": "{name} 必须是{allowed}；收到的是 {got}。"},
    "common.link_no_file": {"en": "A link cannot carry a file: upload a .npy, .npz or .pt file with q and k in the "
                                  "data panel, and the tab draws it.",
                            "zh": "链接无法携带文件：请在数据面板上传含 q 和 k 的 .npy、.npz 或 .pt 文件，标签页随即绘制。"},
    "common.every_head": {"en": "every layer and head", "zh": "所有层和头"},
    "common.unknown_head": {"en": "an unknown head", "zh": "未知的头"},
    "common.err_whole": {"en": "{name}: expected a whole number, got {value}",
                         "zh": "{name}：应为整数，收到的是 {value}"},

    # n/a cells of the metrics tables and why
    "common.na": {"en": "n/a", "zh": "无值"},
    "common.na_rows": {"en": "n/a ({count} of {total} rows)", "zh": "无值（{total} 行中 {count} 行）"},
    "common.na_some": {"en": "{number} ({count} of {total} rows n/a)", "zh": "{number}（{total} 行中 {count} 行无值）"},
    "common.na_note": {"en": "n/a: {map}, {metric} {verdict}: no value on {count} of {total} rows because {why}{tail}.",
                       "zh": "无值：{map} 的 {metric}{verdict}：{total} 行中有 {count} 行没有值，因为{why}{tail}。"},
    "common.na_all": {"en": "n/a", "zh": "无值"},
    "common.na_part": {"en": "partly n/a", "zh": "部分无值"},
    "common.na_tail": {"en": "; over the other {rest}: {mean}", "zh": "；其余 {rest} 行的均值为 {mean}"},
    "common.why.map_rel_error": {"en": "their weights are not finite (a zero normaliser)",
                                 "zh": "这些行的权重不是有限值（归一化因子为零）"},
    "common.why.kl_mean": {"en": "the map gives zero, negative or non-finite weight to a key softmax attends to, or "
                                 "the row is ill-defined",
                           "zh": "映射给了 softmax 关注的某个键零、负或非有限的权重，或者该行病态"},
    "common.why.entropy_approx": {"en": "they hold negative or non-finite weights, or are ill-defined: not "
                                        "probability distributions",
                                  "zh": "这些行含负或非有限的权重，或者病态，不是概率分布"},
    "common.why.monotonicity": {"en": "they have a single key (the first causal row), constant weights or logits, "
                                      "or are ill-defined",
                                "zh": "这些行只有一个键（因果的第一行）、权重或 logits 为常数，或者病态"},

    # the names of the maps (names like FAVOR+ stay; the words around them are translated)
    "common.orthogonal": {"en": "orthogonal", "zh": "正交"},
    "common.name.identity": {"en": "identity (q·k)", "zh": "恒等映射 (q·k)"},
    "common.name.sliding_window": {"en": "sliding window", "zh": "滑动窗口"},
    "common.name.hedgehog_untrained": {"en": "Hedgehog (untrained: W = I)", "zh": "Hedgehog（未训练：W = I）"},
    "common.name.hedgehog_trained": {"en": "Hedgehog (trained)", "zh": "Hedgehog（已训练）"},
    "common.name.luna_untrained": {"en": "LUNA (untrained: FAVOR+ start)", "zh": "LUNA（未训练：从 FAVOR+ 起步）"},
    "common.name.luna_trained": {"en": "LUNA (trained)", "zh": "LUNA（已训练）"},

    # the metrics: full label (CSV, help), short header (tables beside figures), explanation
    "common.metric.map_rel_error": {"en": "Map error (relative, Frobenius)", "zh": "注意力图误差（相对，Frobenius 范数）"},
    "common.metric.output_rel_error": {"en": "Output error (relative, Frobenius)", "zh": "输出误差（相对，Frobenius 范数）"},
    "common.metric.error_rows_excluded": {"en": "Rows left out of the errors (count)", "zh": "未计入误差的行数"},
    "common.metric.kl_mean": {"en": "KL(softmax ‖ approx) (nats, mean per row)", "zh": "KL(softmax ‖ 近似)（nats，逐行平均）"},
    "common.metric.kl_rows_defined": {"en": "Rows with a defined KL (count)", "zh": "KL 有定义的行数"},
    "common.metric.kl_rows_undefined": {"en": "Rows with undefined KL (count)", "zh": "KL 无定义的行数"},
    "common.metric.entropy_reference": {"en": "Entropy of softmax (nats, mean per row)", "zh": "softmax 的熵（nats，逐行平均）"},
    "common.metric.entropy_approx": {"en": "Entropy of approximation (nats, mean per row)", "zh": "近似的熵（nats，逐行平均）"},
    "common.metric.entropy_approx_rows_undefined": {"en": "Rows without an approximate entropy (count)",
                                                    "zh": "近似熵无定义的行数"},
    "common.metric.monotonicity": {"en": "Monotonicity (Spearman ρ, mean per row)", "zh": "单调性（Spearman ρ，逐行平均）"},
    "common.metric.monotonicity_rows_defined": {"en": "Rows with a defined ρ (count)", "zh": "ρ 有定义的行数"},
    "common.metric.monotonicity_rows_undefined": {"en": "Rows with undefined ρ (count)", "zh": "ρ 无定义的行数"},
    "common.metric.negative_fraction": {"en": "Negative weights (fraction)", "zh": "负权重占比"},
    "common.metric.ill_defined_rows": {"en": "Ill-defined rows (count)", "zh": "病态行数"},
    "common.metric.total_rows": {"en": "Rows (count)", "zh": "行数"},
    "common.metric.causal": {"en": "Causal (0/1)", "zh": "因果（0/1）"},
    "common.metric.feature_dim": {"en": "Feature dimension m", "zh": "特征维度 m"},
    "common.metric.quadratic_flops": {"en": "Quadratic path (FLOPs per head)", "zh": "二次路径（每头 FLOPs）"},
    "common.metric.linear_flops": {"en": "Linear path (FLOPs per head)", "zh": "线性路径（每头 FLOPs）"},
    "common.metric.flop_ratio": {"en": "Quadratic / linear (ratio)", "zh": "二次 / 线性（倍数）"},

    "common.short.map_rel_error": {"en": "map err (rel)", "zh": "图误差"},
    "common.short.output_rel_error": {"en": "out err (rel)", "zh": "输出误差"},
    "common.short.error_rows_excluded": {"en": "err rows out", "zh": "未计误差行"},
    "common.short.kl_mean": {"en": "KL (nats)", "zh": "KL (nats)"},
    "common.short.kl_rows_defined": {"en": "KL rows", "zh": "KL 有效行"},
    "common.short.kl_rows_undefined": {"en": "KL rows undef", "zh": "KL 无定义行"},
    "common.short.entropy_reference": {"en": "H softmax (nats)", "zh": "softmax 熵 (nats)"},
    "common.short.entropy_approx": {"en": "H approx (nats)", "zh": "近似熵 (nats)"},
    "common.short.entropy_approx_rows_undefined": {"en": "H rows undef", "zh": "熵无定义行"},
    "common.short.monotonicity": {"en": "Spearman ρ", "zh": "Spearman ρ"},
    "common.short.monotonicity_rows_defined": {"en": "ρ rows", "zh": "ρ 有效行"},
    "common.short.monotonicity_rows_undefined": {"en": "ρ rows undef", "zh": "ρ 无定义行"},
    "common.short.negative_fraction": {"en": "neg. weights", "zh": "负权重"},
    "common.short.ill_defined_rows": {"en": "ill rows", "zh": "病态行"},
    "common.short.total_rows": {"en": "rows", "zh": "行数"},
    "common.short.causal": {"en": "causal", "zh": "因果"},
    "common.short.feature_dim": {"en": "m", "zh": "m"},
    "common.short.quadratic_flops": {"en": "FLOPs N²", "zh": "N² FLOPs"},
    "common.short.linear_flops": {"en": "FLOPs linear", "zh": "线性 FLOPs"},
    "common.short.flop_ratio": {"en": "FLOP ratio", "zh": "FLOP 倍数"},

    "common.help.map_rel_error": {"en": "‖Â − A‖_F / ‖A‖_F per head, averaged over heads; rows with non-finite "
                                        "weights are left out.",
                                  "zh": "每个头的 ‖Â − A‖_F / ‖A‖_F，再对各头平均；权重非有限的行不计入。"},
    "common.help.output_rel_error": {"en": "‖ÂV − AV‖_F / ‖AV‖_F per head, averaged: the error that reaches the "
                                           "next layer.",
                                     "zh": "每个头的 ‖ÂV − AV‖_F / ‖AV‖_F，再平均：传到下一层的误差。"},
    "common.help.error_rows_excluded": {"en": "Rows whose approximate weights are not finite (zero normaliser), so no "
                                              "error can be measured on them.",
                                        "zh": "近似权重不是有限值（归一化因子为零）的行，这些行上量不出误差。"},
    "common.help.kl_mean": {"en": "How much probability mass the approximation misplaces, averaged over the rows "
                                  "where the KL is defined.",
                            "zh": "近似放错了多少概率质量，对 KL 有定义的行取平均。"},
    "common.help.kl_rows_defined": {"en": "Rows where the approximation is positive wherever softmax is, and the row "
                                          "is not ill-defined.",
                                    "zh": "凡 softmax 为正处近似也为正、且不病态的行。"},
    "common.help.kl_rows_undefined": {"en": "Rows where the approximation gives zero, negative or non-finite weight to "
                                            "a key softmax attends to, or is ill-defined.",
                                      "zh": "近似给 softmax 关注的某个键零、负或非有限权重的行，或病态的行。"},
    "common.help.entropy_reference": {"en": "Low entropy means spiky attention that focuses on a few keys; log N is "
                                            "perfectly uniform.",
                                      "zh": "熵低说明注意力尖锐、集中在少数几个键上；log N 表示完全均匀。"},
    "common.help.entropy_approx": {"en": "Compare with the softmax entropy: a much higher value means the "
                                         "approximation is too flat.",
                                   "zh": "与 softmax 的熵比较：高出很多说明近似太平。"},
    "common.help.entropy_approx_rows_undefined": {"en": "Rows with negative or non-finite weights, or flagged "
                                                        "ill-defined: they are not distributions.",
                                                  "zh": "含负或非有限权重、或被标为病态的行：它们不是概率分布。"},
    "common.help.monotonicity": {"en": "Rank correlation between the logit q·k/√d and the approximate weight: 1 means "
                                       "keys are ranked as softmax ranks them.",
                                 "zh": "logit q·k/√d 与近似权重的秩相关：1 表示各键的排序与 softmax 完全一致。"},
    "common.help.monotonicity_rows_defined": {"en": "Rows with at least two allowed keys, finite weights and neither "
                                                    "logits nor weights constant.",
                                              "zh": "至少有两个可用的键、权重有限、且 logits 与权重都不是常数的行。"},
    "common.help.monotonicity_rows_undefined": {"en": "Rows with a single key (the first causal row), constant values, "
                                                      "or ill-defined weights.",
                                                "zh": "只有一个键（因果的第一行）、数值为常数或权重病态的行。"},
    "common.help.negative_fraction": {"en": "Share of the allowed weights in finite rows that are below zero; softmax "
                                            "has none.",
                                      "zh": "有限行中可用权重里小于零的比例；softmax 没有负权重。"},
    "common.help.ill_defined_rows": {"en": "Rows whose normaliser is zero, negative, tiny or non-finite: the kernel "
                                           "cannot be normalised there.",
                                     "zh": "归一化因子为零、为负、过小或非有限的行：核在这些行上无法归一化。"},
    "common.help.total_rows": {"en": "Number of attention rows compared, over every head.",
                               "zh": "参与比较的注意力行数，计入所有头。"},
    "common.help.causal": {"en": "1 when only keys j ≤ i are allowed; given by the caller or read from the zeros of "
                                 "both maps.",
                           "zh": "只允许 j ≤ i 的键时为 1；由调用方给出，或从两张图的零元读出。"},
    "common.help.feature_dim": {"en": "Length of φ(x); the linear path costs O(N m d) instead of O(N² d).",
                                "zh": "φ(x) 的长度；线性路径的计算量是 O(N m d)，而不是 O(N² d)。"},
    "common.help.quadratic_flops": {"en": "QKᵀ and AV: about 2N²(d + d_v), half of it when causal.",
                                    "zh": "QKᵀ 与 AV：约 2N²(d + d_v)，因果时减半。"},
    "common.help.linear_flops": {"en": "φ(K)ᵀV, φ(Q)(φ(K)ᵀV) and the normaliser: about 4N m d_v + 4N m.",
                                 "zh": "φ(K)ᵀV、φ(Q)(φ(K)ᵀV) 与归一化因子：约 4N m d_v + 4N m。"},
    "common.help.flop_ratio": {"en": "Above 1 the linear path does less arithmetic than the quadratic one.",
                               "zh": "大于 1 时，线性路径的运算量比二次路径少。"},

    "common.glossary_line": {"en": "- **{short}** ({label}): {help}", "zh": "- **{short}** · {label}：{help}"},

    # spread over seeds
    "common.seed_spread": {"en": "mean ± sd over {k} seeds", "zh": "{k} 个种子的均值 ± 标准差"},
    "common.single_draw": {"en": "seed {seed}", "zh": "种子 {seed}"},

    # the page's own messages (toasts)
    "common.toast_check": {"en": "Please check the input", "zh": "请检查输入"},
    "common.toast_large": {"en": "Too large", "zh": "规模过大"},
    "common.toast_internal": {"en": "Internal error", "zh": "内部错误"},
    "common.toast_memory": {"en": "Not enough memory for this request; try a smaller N or fewer maps.",
                            "zh": "内存不足以完成这次请求；请减小 N 或少选几个映射。"},
    "common.toast_wrong": {"en": "Something went wrong ({what}). The app is still running; try other settings.",
                           "zh": "出了点问题（{what}）。应用仍在运行，请换一组设置再试。"},
    "common.toast_surrogates": {"en": "Replaced {count} invalid character(s) (lone surrogates) with U+FFFD.",
                                "zh": "已把 {count} 个无效字符（孤立代理项）替换为 U+FFFD。"},
    "common.body_too_large": {"en": "This request is larger than {limit} MB; send a shorter text or upload a file.",
                              "zh": "这次请求超过 {limit} MB；请发送更短的文本，或上传文件。"},
    "common.queue_share": {"en": "You already have {count} requests waiting; wait for them to finish and try again.",
                           "zh": "你已有 {count} 个请求在排队；请等它们完成后再试。"},
    "common.toast_more": {"en": "... and {count} more notices.", "zh": "……另有 {count} 条提示。"},
    "common.toast_nothing": {"en": "Nothing to export yet: run this tab first.", "zh": "还没有可导出的内容：请先运行本页。"},
}
