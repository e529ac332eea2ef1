"""Words of the request model's refusals (explorer/measure/cost.py): what a request would
compute, what to lower, and the sentence that says it is over this server's limit."""

TEXT = {
    "cost.over_memory": {
        "en": "{what} needs about {need} of memory; the limit on this server is {limit}: lower {lower}",
        "zh": "{what}大约需要 {need} 内存，本服务器的上限是 {limit}：请减小{lower}"},
    "cost.over_time": {
        "en": "{what} would take about {need} s; the limit on this server is {limit} s: lower {lower}",
        "zh": "{what}大约需要 {need} 秒，本服务器的上限是 {limit} 秒：请减小{lower}"},

    # What a request computes.
    "cost.what_sample": {"en": "the sample (N = {n}, d = {d}, {heads} head(s))",
                         "zh": "数据（N = {n}，d = {d}，{heads} 个头）"},
    "cost.what_reference": {"en": "the softmax reference at N = {n}", "zh": "N = {n} 时的 softmax 参照"},
    "cost.what_reference_heads": {"en": "the softmax reference at N = {n} over {heads} heads",
                                  "zh": "N = {n} 时 {heads} 个头的 softmax 参照"},
    "cost.what_map": {"en": "{map} at N = {n}, d = {d} ({features} features)",
                      "zh": "N = {n}、d = {d} 时的 {map}（{features} 个特征）"},
    "cost.what_overview": {"en": "the overview of {heads} heads at N = {n} with {map} ({features} features)",
                           "zh": "N = {n} 时用 {map}（{features} 个特征）总览 {heads} 个头"},
    "cost.what_quality": {"en": "the quality curves at N = {n} ({maps} map(s) × {seeds} seeds, m up to {m})",
                          "zh": "N = {n} 时的质量曲线（{maps} 个映射 × {seeds} 个种子，m 最大 {m}）"},
    "cost.what_state": {"en": "the recurrent state of {map} over N = {n} steps ({features} features × d_v = {dv})",
                        "zh": "{map} 在 N = {n} 步上的循环状态（{features} 个特征 × d_v = {dv}）"},
    "cost.what_sweep": {"en": "the sweep up to N = {n} (d = {d}, m = {m})",
                        "zh": "直到 N = {n} 的测速（d = {d}，m = {m}）"},
    "cost.what_learn": {"en": "training on {texts} texts ({heads} head(s), m = {m}, {steps} steps)",
                        "zh": "在 {texts} 段文本上训练（{heads} 个头，m = {m}，{steps} 步）"},
    "cost.what_hybrid": {"en": "the hybrid search on {texts} texts (m = {m})",
                         "zh": "在 {texts} 段文本上搜索混合模型（m = {m}）"},

    # What to lower.
    "cost.lower_n": {"en": "N", "zh": " N"},
    "cost.lower_n_or_d": {"en": "N or d", "zh": " N 或 d"},
    "cost.lower_d_or_n": {"en": "d or N", "zh": " d 或 N"},
    "cost.lower_m_or_n": {"en": "m or N", "zh": " m 或 N"},
    "cost.lower_n_or_m": {"en": "N or m", "zh": " N 或 m"},
    "cost.lower_n_mean": {"en": "N (or pick one head instead of the mean)", "zh": " N（或只选一个头，不取平均）"},
    "cost.lower_n_text": {"en": "N (use a shorter text)", "zh": " N（换一段更短的文本）"},
    "cost.lower_quality": {"en": "N, the seeds or the largest m", "zh": " N、种子数或最大的 m"},
    "cost.lower_n_max": {"en": "N max", "zh": "最大 N"},
    "cost.lower_learn": {"en": "the steps, m or the number of texts", "zh": "步数、m 或文本数"},
    "cost.lower_hybrid": {"en": "m or the number of texts", "zh": " m 或文本数"},
}
