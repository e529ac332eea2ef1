"""The state tab's words: update names, figure text, notices and errors.

Names of models (RetNet, GLA, HGRN2, DeltaNet, Gated DeltaNet) and of the delta rule stay in
Latin letters in Chinese, as do the symbols of the formulas.
"""

TEXT = {
    # The updates, in the order the tab lists them (explorer.forms.state.DECAY_KINDS).
    "state.kind.none": {"en": "no decay", "zh": "无衰减"},
    "state.kind.retnet": {"en": "RetNet γ", "zh": "RetNet γ"},
    "state.kind.gla": {"en": "GLA gates", "zh": "GLA 门控"},
    "state.kind.hgrn2": {"en": "HGRN2 gates", "zh": "HGRN2 门控"},
    "state.kind.deltanet": {"en": "DeltaNet", "zh": "DeltaNet"},
    "state.kind.gated_deltanet": {"en": "Gated DeltaNet", "zh": "Gated DeltaNet"},
    "state.kind.unit_additive": {"en": "no decay, unit keys, no z", "zh": "无衰减，单位键，无 z"},

    # Step view
    "state.step_title_additive": {"en": "Causal linear attention as an RNN: S_t = G_t ⊙ S_{t−1} + φ(k_t) v_tᵀ",
                                  "zh": "因果线性注意力就是 RNN：S_t = G_t ⊙ S_{t−1} + φ(k_t) v_tᵀ"},
    "state.step_title_hgrn2": {"en": "HGRN2: S_t = diag(f_t) S_{t−1} + (1 − f_t) v_tᵀ, the input gate tied to the forget gate",
                               "zh": "HGRN2：S_t = diag(f_t) S_{t−1} + (1 − f_t) v_tᵀ，输入门与遗忘门绑定"},
    "state.step_title_delta": {"en": "The delta rule: S_t = a_t (I − β k_t k_tᵀ) S_{t−1} + β k_t v_tᵀ",
                               "zh": "Delta 规则：S_t = a_t (I − β k_t k_tᵀ) S_{t−1} + β k_t v_tᵀ"},
    "state.step_written_additive": {"en": "φ(k_t) v_tᵀ added at t = {t}{token}",
                                    "zh": "t = {t} 时加上的 φ(k_t) v_tᵀ{token}"},
    "state.step_written_hgrn2": {"en": "(1 − f_t) v_tᵀ written at t = {t}{token}",
                                 "zh": "t = {t} 时写入的 (1 − f_t) v_tᵀ{token}"},
    "state.step_written_delta": {"en": "written: β k_t v_tᵀ at t = {t}{token}",
                                 "zh": "写入：t = {t} 时的 β k_t v_tᵀ{token}"},
    "state.step_erased": {"en": "erased: β k_t (k_tᵀ S_{t−1})",
                          "zh": "擦除：β k_t (k_tᵀ S_{t−1})"},
    "state.step_state": {"en": "state S_t after t = {t}, {kind}", "zh": "t = {t} 之后的状态 S_t，{kind}"},
    "state.step_bar_written": {"en": "written", "zh": "写入量"},
    "state.step_bar_update": {"en": "update", "zh": "写入量"},
    "state.step_bar_erased": {"en": "erased", "zh": "擦除量"},
    "state.step_bar_state": {"en": "S_t entry", "zh": "S_t 的元素"},
    "state.step_x": {"en": "value dimension j", "zh": "值维度 j"},
    "state.step_y_features": {"en": "key feature i of φ", "zh": "φ 的键特征 i"},
    "state.step_y_keys": {"en": "key dimension i", "zh": "键维度 i"},
    "state.step_note_delta": {"en": "Before writing v_t under k_t, the delta rule erases what the state held there: "
                                    "S_t = a_t (S_{t−1} − erased) + written.",
                              "zh": "Delta 规则先擦掉状态在 k_t 方向上的旧内容，再写入 v_t："
                                    "S_t = a_t (S_{t−1} − 擦除量) + 写入量。"},
    "state.hover_cell": {"en": "row %{y}, value dim %{x}", "zh": "第 %{y} 行，值维度 %{x}"},

    # Curves over time and recall
    "state.curves_title": {"en": "What the fixed-size state holds over time", "zh": "固定大小的状态里随时间装了什么"},
    "state.panel_norm": {"en": "‖S_t‖ (Frobenius)", "zh": "‖S_t‖（Frobenius 范数）"},
    "state.panel_normaliser": {"en": "‖z_t‖ (normaliser)", "zh": "‖z_t‖（归一化项）"},
    "state.panel_rank": {"en": "effective rank of S_t", "zh": "S_t 的有效秩"},
    "state.panel_recall": {"en": "recall, synthetic keys: early (solid), recent (dashed)",
                           "zh": "召回（合成键）：早写入的键为实线，最近写入的为虚线"},
    "state.no_normaliser": {"en": "HGRN2 and the delta rule read S_tᵀq: no z",
                            "zh": "HGRN2 与 Delta 规则直接读 S_tᵀq，没有 z"},
    "state.axis_token": {"en": "token t", "zh": "词元位置 t"},
    "state.axis_lag": {"en": "lag (other keys written after / before it)", "zh": "间隔（其后或其前写入的其他键数）"},
    "state.axis_rank": {"en": "effective rank", "zh": "有效秩"},
    "state.axis_cosine": {"en": "cosine(read-out, value)", "zh": "读出与值的余弦相似度"},
    "state.legend_update": {"en": "update", "zh": "更新方式"},
    "state.recent_key": {"en": "{kind} (recent key)", "zh": "{kind}（最近的键）"},
    "state.hover_early": {"en": "{kind}, early key", "zh": "{kind}，早写入的键"},
    "state.hover_recent": {"en": "{kind}, recent key", "zh": "{kind}，最近的键"},
    "state.hover_lag": {"en": "lag", "zh": "间隔"},
    "state.hover_cosine": {"en": "cosine", "zh": "余弦"},

    # Capacity
    "state.capacity_title": {"en": "Capacity: stored pairs still recalled", "zh": "容量：还能召回多少存入的键值对"},
    "state.capacity_note": {"en": "a pair counts when cosine(read-out, value) > {threshold}; synthetic random keys, "
                                  "mean over {trials} trials",
                            "zh": "读出与值的余弦大于 {threshold} 才算召回；合成随机键，{trials} 次试验取平均"},
    "state.capacity_x": {"en": "pairs written P", "zh": "写入的键值对数 P"},
    "state.capacity_y": {"en": "pairs recalled", "zh": "召回的键值对数"},
    "state.capacity_all": {"en": "all recalled", "zh": "全部召回"},
    "state.capacity_d": {"en": "P = d = {d}", "zh": "P = d = {d}"},
    "state.capacity_hover": {"en": "{kind}<br>P = %{{x}}: %{{y:.1f}} recalled",
                             "zh": "{kind}<br>P = %{{x}}：召回 %{{y:.1f}} 对"},

    # Memory
    "state.memory_title": {"en": "Memory while decoding: KV cache vs fixed state", "zh": "解码时的内存：KV 缓存与固定状态"},
    "state.memory_cache": {"en": "softmax KV cache (K and V of every token)", "zh": "softmax 的 KV 缓存（每个词元的 K 与 V）"},
    "state.memory_state": {"en": "linear-attention state S and z (m = {m})", "zh": "线性注意力的状态 S 与 z（m = {m}）"},
    "state.memory_cross": {"en": " the cache outgrows the state at t = {t}", "zh": " 从 t = {t} 起缓存超过状态"},
    "state.memory_x": {"en": "tokens seen t", "zh": "已读入的词元数 t"},
    "state.memory_y": {"en": "memory per head (KiB, float32)", "zh": "每个头的内存（KiB，float32）"},

    # Notices
    "state.notice_head": {"en": "The recurrent state belongs to one head: showing head 0 (mean over heads does not apply).",
                          "zh": "循环状态属于单个头：这里显示第 0 个头（对所有头取平均没有意义）。"},
    "state.notice_synthetic": {"en": "Recall is probed with synthetic random keys and values (lags {low}–{high} tokens, "
                                     "{trials} trials), not with the text: it needs a known target and lags longer "
                                     "than a sentence.",
                               "zh": "召回用合成的随机键和值来测（间隔 {low}–{high} 个词元，{trials} 次试验），"
                                     "不用文本本身：它需要已知的目标，间隔也要比一句话长。"},
    "state.notice_keys": {"en": "HGRN2 and the delta rule use no feature map φ: HGRN2 writes its input gate 1 − f_t "
                                "(forget gate f_t ≥ {lower_bound}), the delta rule the L2-normalised key (β = {beta}).",
                          "zh": "HGRN2 与 Delta 规则不用特征映射 φ：HGRN2 写入的是输入门 1 − f_t（遗忘门 f_t ≥ {lower_bound}），"
                                "Delta 规则写入 L2 归一化后的键（β = {beta}）。"},
    "state.progress": {"en": "stepping the state through the sequence", "zh": "正在让状态逐步读完序列"},

    # Errors: one sentence each, naming the control and its allowed values.
    "state.error_kind": {"en": "Update: choose one of {choices}; got {value}.",
                         "zh": "更新方式：请从 {choices} 中选一个，收到的是 {value}。"},
    "state.error_softmax": {"en": "Feature map: softmax has no finite state; choose a feature map such as elu+1.",
                            "zh": "特征映射：softmax 没有固定大小的状态，请选择 elu+1 等特征映射。"},
    "state.error_map": {"en": "Feature map: choose one of the listed maps; got {value}.",
                        "zh": "特征映射：请从列出的映射中选择，收到的是 {value}。"},
    "state.error_number": {"en": "{name}: expected a number from {low} to {high}, got {value}.",
                           "zh": "{name}：应为 {low} 到 {high} 之间的数，收到的是 {value}。"},
    "state.error_whole": {"en": "{name}: expected a whole number from {low} to {high}, got {value}.",
                          "zh": "{name}：应为 {low} 到 {high} 之间的整数，收到的是 {value}。"},
    "state.error_gamma": {"en": "RetNet γ: expected a number above 0 and at most 1, got {value}.",
                          "zh": "RetNet γ：应大于 0 且不超过 1，收到的是 {value}。"},
    "state.error_beta": {"en": "Delta-rule β: expected a number above 0 and at most 1, got {value}.",
                         "zh": "Delta 规则的 β：应大于 0 且不超过 1，收到的是 {value}。"},
    "state.error_size": {"en": "N: recording the state at every step takes N × m × d_v = {size} numbers, over the cap "
                               "of {cap}; use a shorter sequence or a smaller m.",
                         "zh": "N：逐步记录状态需要 N × m × d_v = {size} 个数，超过上限 {cap}；请缩短序列或减小 m。"},
    "state.error_run_first": {"en": "Run the RNN first.", "zh": "请先运行 RNN。"},
    "state.name_m": {"en": "Features m", "zh": "特征数 m"},
    "state.name_seed": {"en": "Seed", "zh": "随机种子"},
    "state.name_strength": {"en": "Gate strength", "zh": "门控强度"},
    "state.name_lower_bound": {"en": "HGRN2 lower bound", "zh": "HGRN2 下界"},
    "state.name_t": {"en": "Step t", "zh": "第 t 步"},
}
