"""The app's own words in English and Simplified Chinese, for gradio's ``gr.I18n``.

Labels built into the page are translation keys (``label("tab_maps")``); the browser
translates them with the dictionaries below, in the language gradio picks (the browser's,
or the one the language switch sets). Strings the server writes at run time (the lecture's
claims, chapter titles, links) are looked up with ``text(key, lang)`` instead.

To translate another part of the app, add its keys to both ``EN`` and ``ZH`` and use
``label(key)`` where the component is built; ``tests/test_i18n.py`` checks the two
dictionaries have the same keys. The lecture's own text (claims, figure titles, control
labels) lives in the engine, ``explorer.lecture.text``; ``translations()`` merges it in.

Keys use underscores, not dots: gradio's frontend would read a dot as a nested path.
Chinese is written for this app, short enough for a button on a projector.
"""

from __future__ import annotations

import re

import gradio as gr

from ..words import normal_lang  # noqa: F401  (one reading of a language code for page and engine)

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
# What the language switch shows (each language named in itself).
LANG_NAMES = {"en": "English", "zh": "中文"}
# gradio picks the browser's locale only among the ones it ships (zh-CN, zh-TW, ...), and
# looks a locale's keys up in its own dictionary first, then in its language's ("zh").
GRADIO_LOCALES = {"en": "en", "zh": "zh-CN"}

EN: dict[str, str] = {
    # header and tab row
    "intro": ("**Attention Kernel Explorer** · softmax attention is kernel regression with the kernel exp(q·k/√d); "
              "replace it by φ(q)·φ(k) and associativity turns O(N²) into O(N): **(φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV)**."),
    "presentation": "Presentation mode",
    "presentation_info": "large fonts, thick lines, colour-blind-safe",
    "language": "Language",
    "tab_lecture": "Lecture",
    "tab_maps": "Attention maps",
    "tab_quality": "Feature-map quality",
    "tab_state": "Recurrent state",
    "tab_complexity": "Complexity",
    "tab_learn": "Learned maps & hybrids",
    # data panel
    "panel_title": "Data: where Q, K, V come from",
    "summary_tokens": "{n} tokens",
    "summary_random": "random {preset}, d = {d}",
    "summary_file": "uploaded Q, K, V",
    "summary_layer": "layer {layer}",
    "summary_head": "head {h}",
    "summary_mean": "mean of the heads",
    "panel_source": "Source",
    "panel_source_info": "a text read by a model, random data or your arrays",
    "panel_source_text": "text",
    "panel_source_random": "random",
    "panel_source_file": "file",
    "panel_model": "Model",
    "panel_model_info": "reads the text; layers and heads follow it",
    "panel_model_other": "Other model",
    "panel_model_other_hint": "a folder or a Hub id (e.g. gpt2), then Enter",
    "panel_layer": "Layer",
    "panel_head": "Head",
    "panel_head_info": "'mean': all heads",
    "panel_text": "Text (up to 512 tokens)",
    "panel_text_placeholder": "Type or paste a text: Enter redraws, Shift+Enter starts a new line",
    "panel_examples": "Examples",
    "panel_examples_info": "choose one to draw it",
    "panel_preset": "Preset",
    "panel_n": "N tokens",
    "panel_d": "head dim d",
    "panel_seed": "data seed",
    "panel_temperature": "temperature",
    "panel_temperature_info": "divides the logits",
    "panel_file": "q, k (and v): .npz with arrays q, k, v; .npy stacked (2 or 3, [H,] N, d); .pt dict",
    # lecture tab
    "lecture_chapter": "Chapter",
    "lecture_prev": "◀ Previous",
    "lecture_next": "Next ▶",
    "lecture_try": "Try this",
    "lecture_controls": "This chapter's controls",
    "lecture_numbers": "Numbers",
    "lecture_keys": "→ / PageDown / Space: next build · ← / PageUp: back · Home / End: first / last · "
                    "D: this drawer · N: notes · S: speaker window",
    "lecture_drawer": "☰ Controls",
    "lecture_speaker": "Notes ↗",
    "lecture_notes": "Speaker notes",
    "lecture_next_build": "Next on screen:",
    "lecture_end": "This is the last build.",
    "lecture_deeper": "Go deeper: the {tab} tab on this view",
    # the other tabs and the export band
    "view_link": "Link to this view (put it on a slide)",
    "downloads": "Downloads",
    "export_maps": "Export figure (PNG + HTML) and table (CSV)",
    "export_arrays": "Export arrays (Q, K, V, A, Â, per-row metrics: npz + safetensors)",
    "export_quality": "Export figures (PNG + HTML) and table (CSV)",
    "export_state": "Export figures (PNG + HTML) and curves (CSV)",
    "export_complexity": "Export figures (PNG + HTML) and runs (CSV)",
    "export_learn": "Export figures (PNG + HTML) and tables (CSV)",
    "features_m": "Features m",
    "features_m_info": "FAVOR+, trig RFF, Hedgehog",
    "causal": "Causal",
    "seed": "Seed",
    "maps_maps": "Maps",
    "maps_maps_info": "softmax is the exact reference; the others are linear-attention kernels",
    "maps_causal": "Causal (keys j ≤ i only)",
    "maps_window": "Window w",
    "maps_window_info": "sliding window: exact softmax on the w nearest keys, the linear map beyond",
    "maps_seed": "Feature seed",
    "maps_seed_info": "new seed = new random features",
    "maps_run": "Draw the maps",
    "maps_plot": "Attention maps (top) and their errors against softmax (below)",
    "maps_table": ("Metrics, one row per map (full-resolution maps; the judging numbers first, scroll right for "
                   "the counts; the headers are explained below)"),
    "maps_metrics_help": "What the metrics mean",
    "quality_maps": "Random-feature maps",
    "quality_seeds": "Seeds",
    "quality_seeds_info": "redraws of the features",
    "quality_x": "Plot against",
    "quality_x_info": "FLOPs: the linear path's cost at each m",
    "quality_m_info": "for the entropy and monotonicity bars",
    "quality_omap": "Head overview: map",
    "quality_ometric": "Head overview: metric",
    "quality_run": "Measure",
    "quality_curves": "Error against m",
    "quality_norms": "Norms and the m FAVOR+ needs",
    "quality_preset": "Try: small norms, where random features converge",
    "state_preset": "Try: a longer text, where forgetting shows",
    "quality_shape": "Entropy and monotonicity",
    "quality_overview": "Every head",
    "quality_heads": "Heads, hardest first: select a row (or click a cell of the overview) to open it in the maps tab",
    "quality_open_layer": "layer",
    "quality_open_head": "head",
    "quality_open": "Open in the maps tab",
    "state_map": "Feature map φ",
    "state_seed_info": "random features and gates",
    "state_gamma": "RetNet γ",
    "state_gamma_info": "decay per token",
    "state_strength": "Gate strength",
    "state_strength_info": "GLA, Gated DeltaNet; 0 = never forget",
    "state_kind": "Update shown in the step view",
    "state_run": "Run the RNN",
    "state_t": "Step t",
    "state_step": "One step",
    "state_curves": "Over time",
    "state_memory": "Memory",
    "state_lower_bound": "HGRN2 lower bound of f",
    "state_lower_bound_info": "layer depth: 0 = bottom, forgets fast; 0.99 = top",
    "state_beta": "Delta-rule β",
    "state_beta_info": "1 = overwrite the key's value fully",
    "state_capacity": "Capacity",
    "cx_nmin": "N min",
    "cx_nmax": "N max",
    "cx_points": "Points",
    "cx_m": "features m",
    "cx_m_info": "0: the map's own",
    "cx_map": "Feature map",
    "cx_causal_info": "adds the chunked and recurrent forms",
    "cx_methods": "Methods",
    "cx_repeats": "Timing samples",
    "cx_repeats_info": "per run",
    "cx_run": "Run the sweep",
    "cx_cancel": "Cancel",
    "cx_plot": "Time and memory against N",
    "cx_claim": "The article's 780× claim",
    "cx_table": "Every run",
    "cx_start": ("Press **Run the sweep** to time every method at each N (it takes up to a minute and the whole "
                 "CPU), or open a complexity link."),
    "learn_help": "What this tab shows",
    "learn_part1": "### 1 · Learn a feature map that imitates softmax",
    "learn_head_info": "all heads: one joint training, needed for the hybrid",
    "learn_m_info": "the learned map and FAVOR+",
    "learn_kind": "Learned map",
    "learn_kind_info": "Hedgehog: softmax features; LUNA: learned projections, channel functions and envelope",
    "learn_all_heads": "all 72 heads",
    "learn_shipped": "Show the map shipped for layer 2 (no training)",
    "learn_tradeoff": "Features m against held-out KL",
    "learn_status_none": ("**Trained map for the hybrid:** none yet. Train \"all heads\" above (one head is not "
                          "enough: a linear layer needs a map for each of its heads), or load a saved all-heads map."),
    "hybrid_mode_layers": "chosen layers",
    "hybrid_map_hedgehog": "Hedgehog (trained)",
    "hybrid_map_luna": "LUNA (trained)",
    "hybrid_mode_greedy": "greedy",
    "learn_help_text": (
        "**Part 1 — learned feature maps.** Two kinds, both trained with Adam so that their attention rows match "
        "the model's softmax rows. **Hedgehog**: φ(x) = [softmax(Wx′+b), softmax(−Wx′−b)], W starting at the "
        "identity. **LUNA** (after Shahbazi et al., 2025): φ(x) = e(x) · [ψ_c(w_c·x′ + b_c)]_c / √m, with learned "
        "projections w_c, channel functions ψ_c (a positive mix of exp, softplus and relu²) and a token-wise "
        "envelope e(x); it starts as FAVOR+ and one map serves queries and keys, so its kernel is positive-definite. "
        "The loss is the **row cross-entropy** −Σⱼ Aᵢⱼ log Âᵢⱼ, which is KL(A‖Â) plus the entropy of A, so it "
        "levels off above zero. Training uses `assets/texts/train.txt`; every number in the comparison comes from "
        "the **held-out texts only** (`heldout.txt`, disjoint from training). LUNA is compared with Hedgehog trained "
        "the same way. FAVOR+ gets the same m; Taylor-2's m is fixed by d (1 + d + d(d+1)/2). One head trains in "
        "seconds; all heads train jointly (MiniLM's 72: fewer steps, e.g. 150, take a minute or more). The model "
        "menu picks whose heads are read: the embedded MiniLM, the causal SmolLM2-135M (30 layers × 9 heads; "
        "trained and judged against its causal softmax, over the keys each row can see) or another model the "
        "server allows. A trained map is yours alone: the maps and quality tabs of this browser session offer it "
        "on the model and heads it was trained on. "
        "Download it (safetensors) to reuse it in a talk, and load it back with the upload box.\n\n"
        "**Part 2 — hybrid models.** Replace the attention of some layers of the real model by kernel attention "
        "and compare its sentence embeddings (cosine) and attention maps (drift) to the original. *Greedy* starts "
        "all-linear and adds back, one at a time, the softmax layer that helps most.\n\n"
        "**Part 3 — the sliding-window hybrid** (exact softmax within a window of w keys, a linear kernel outside) "
        "is the map *sliding window* in the **Attention maps** tab."),
    "learn_steps": "Training steps",
    "learn_texts": "Texts",
    "learn_train_count": "Training texts (train.txt)",
    "learn_heldout_count": "Held-out texts (heldout.txt)",
    "learn_train": "Train",
    "learn_stop": "Stop",
    "learn_summary": "Summary",
    "learn_loss": "Training loss",
    "learn_table": "Held-out comparison (mean over the heads covered)",
    "learn_comparison": "Held-out KL, entropy and monotonicity",
    "learn_heatmap": "Per-head KL ratio (several heads only)",
    "learn_download": "Trained map (.safetensors) to download",
    "learn_upload": "Load a saved map (.safetensors)",
    "learn_part2": "### 2 · Hybrid model: some layers linear",
    "learn_map_status": "Trained map for the hybrid",
    "hybrid_map": "Linear map",
    "hybrid_map_info": "for the swapped layers",
    "hybrid_mode": "Which layers become linear",
    "hybrid_layers": "Linear layers (chosen layers)",
    "hybrid_k": "Greedy: k layers stay softmax",
    "hybrid_m": "FAVOR+ features m",
    "hybrid_run": "Run the hybrid",
    "hybrid_summary": "Hybrid summary",
    "hybrid_cosine": "Embedding cosine to the original model",
    "hybrid_drift": "Attention drift per layer",
    "hybrid_table": "Configurations",
}

ZH: dict[str, str] = {
    "intro": ("**注意力核探索器** · softmax 注意力就是以 exp(q·k/√d) 为核的核回归；"
             "把核换成 φ(q)·φ(k)，结合律便把 O(N²) 变成 O(N)：**(φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV)**。"),
    "presentation": "演示模式",
    "presentation_info": "大字号、粗线条、色盲友好配色",
    "language": "语言",
    "tab_lecture": "讲解",
    "tab_maps": "注意力图",
    "tab_quality": "特征映射质量",
    "tab_state": "循环状态",
    "tab_complexity": "复杂度",
    "tab_learn": "可学习映射与混合模型",
    "panel_title": "数据：Q、K、V 从哪里来",
    "summary_tokens": "{n} 个词元",
    "summary_random": "随机数据 {preset}，d = {d}",
    "summary_file": "上传的 Q、K、V",
    "summary_layer": "第 {layer} 层",
    "summary_head": "第 {h} 个头",
    "summary_mean": "各头平均",
    "panel_source": "来源",
    "panel_source_info": "由模型读入的文本、随机数据或你自己的数组",
    "panel_source_text": "文本",
    "panel_source_random": "随机",
    "panel_source_file": "文件",
    "panel_model": "模型",
    "panel_model_info": "由它读入文本；层与头随之变化",
    "panel_model_other": "其他模型",
    "panel_model_other_hint": "本地文件夹或 Hub id（如 gpt2），按 Enter",
    "panel_layer": "层",
    "panel_head": "头",
    "panel_head_info": "“mean”：所有头的平均",
    "panel_text": "文本（最多 512 个词元）",
    "panel_text_placeholder": "输入或粘贴文本：Enter 重画，Shift+Enter 换行",
    "panel_examples": "示例",
    "panel_examples_info": "选一个即画出",
    "panel_preset": "预设",
    "panel_n": "词元数 N",
    "panel_d": "头维度 d",
    "panel_seed": "数据随机种子",
    "panel_temperature": "温度",
    "panel_temperature_info": "logits 除以它",
    "panel_file": "q、k（及 v）：含数组 q、k、v 的 .npz；堆叠的 .npy（2 或 3，[H,] N, d）；.pt 字典",
    "lecture_chapter": "章节",
    "lecture_prev": "◀ 上一章",
    "lecture_next": "下一章 ▶",
    "lecture_try": "试一试",
    "lecture_controls": "本章的控件",
    "lecture_numbers": "数值",
    "lecture_keys": "→ / PageDown / 空格：下一步 · ← / PageUp：上一步 · Home / End：第一页 / 最后一页 · "
                    "D：本抽屉 · N：讲稿 · S：演讲者窗口",
    "lecture_drawer": "☰ 控件",
    "lecture_speaker": "讲稿 ↗",
    "lecture_notes": "讲稿提示",
    "lecture_next_build": "下一屏：",
    "lecture_end": "已经是最后一屏了。",
    "lecture_deeper": "深入一步：在“{tab}”标签页中打开同一视图",
    "view_link": "本视图的链接（可放进幻灯片）",
    "downloads": "下载",
    "export_maps": "导出图（PNG + HTML）和表格（CSV）",
    "export_arrays": "导出数组（Q、K、V、A、Â 和逐行指标：npz + safetensors）",
    "export_quality": "导出各图（PNG + HTML）和表格（CSV）",
    "export_state": "导出各图（PNG + HTML）和曲线（CSV）",
    "export_complexity": "导出各图（PNG + HTML）和运行记录（CSV）",
    "export_learn": "导出各图（PNG + HTML）和各表（CSV）",
    "features_m": "特征数 m",
    "features_m_info": "用于 FAVOR+、trig RFF、Hedgehog",
    "causal": "因果",
    "seed": "随机种子",
    "maps_maps": "映射",
    "maps_maps_info": "softmax 是精确参照，其余是线性注意力的核",
    "maps_causal": "因果（只看 j ≤ i 的键）",
    "maps_window": "窗口 w",
    "maps_window_info": "滑动窗口：最近 w 个键用精确 softmax，更远的用线性映射",
    "maps_seed": "特征随机种子",
    "maps_seed_info": "换种子 = 换一组随机特征",
    "maps_run": "画出注意力图",
    "maps_plot": "注意力图（上）及其相对 softmax 的误差（下）",
    "maps_table": "指标，每个映射一行（全分辨率；评判指标在前，向右滚动看计数；表头含义见下方）",
    "maps_metrics_help": "各指标的含义",
    "quality_maps": "随机特征映射",
    "quality_seeds": "种子数",
    "quality_seeds_info": "重新抽取特征的次数",
    "quality_x": "横轴",
    "quality_x_info": "FLOPs：各 m 下线性路径的计算量",
    "quality_m_info": "用于熵与单调性柱状图",
    "quality_omap": "各头总览：映射",
    "quality_ometric": "各头总览：指标",
    "quality_run": "测量",
    "quality_curves": "误差随 m 的变化",
    "quality_norms": "范数与 FAVOR+ 所需的 m",
    "quality_preset": "试试：范数小时，随机特征会收敛",
    "state_preset": "试试：更长的文本，遗忘才显现",
    "quality_shape": "熵与单调性",
    "quality_overview": "所有头",
    "quality_heads": "各头，最难的在前：选中一行（或点总览中的格子）即在注意力图中打开",
    "quality_open_layer": "层",
    "quality_open_head": "头",
    "quality_open": "在注意力图中打开",
    "state_map": "特征映射 φ",
    "state_seed_info": "随机特征与门控",
    "state_gamma": "RetNet 衰减 γ",
    "state_gamma_info": "每个词元的衰减",
    "state_strength": "门控强度",
    "state_strength_info": "GLA、Gated DeltaNet；0 = 从不遗忘",
    "state_kind": "单步视图展示的更新方式",
    "state_run": "运行 RNN",
    "state_t": "第 t 步",
    "state_step": "单步",
    "state_curves": "随时间变化",
    "state_memory": "内存",
    "state_lower_bound": "HGRN2 遗忘门下界",
    "state_lower_bound_info": "层的深度：0 为底层，忘得快；0.99 为顶层",
    "state_beta": "Delta 规则的 β",
    "state_beta_info": "1 = 整个覆盖键下原有的值",
    "state_capacity": "容量",
    "cx_nmin": "N 最小值",
    "cx_nmax": "N 最大值",
    "cx_points": "点数",
    "cx_m": "特征数 m",
    "cx_m_info": "0：用映射自带的值",
    "cx_map": "特征映射",
    "cx_causal_info": "加上分块与循环两种形式",
    "cx_methods": "方法",
    "cx_repeats": "计时次数",
    "cx_repeats_info": "每次运行",
    "cx_run": "运行扫描",
    "cx_cancel": "取消",
    "cx_plot": "时间与内存随 N 的变化",
    "cx_claim": "文章中 780× 的说法",
    "cx_table": "每次运行",
    "cx_start": "点 **运行扫描**，在每个 N 上为各方法计时（最多约一分钟，占满整个 CPU），或打开一个复杂度链接。",
    "learn_help": "本页展示什么",
    "learn_part1": "### 1 · 学一个模仿 softmax 的特征映射",
    "learn_head_info": "全部头：一次联合训练，混合模型要用",
    "learn_m_info": "用于学到的映射与 FAVOR+",
    "learn_kind": "学习的映射",
    "learn_kind_info": "Hedgehog：softmax 特征；LUNA：学习投影、通道函数和包络",
    "learn_all_heads": "全部 72 个头",
    "learn_shipped": "显示随应用附带的第 2 层映射（无需训练）",
    "learn_tradeoff": "特征数 m 与留出集 KL",
    "learn_status_none": ("**混合模型用的已训练映射：** 还没有。请在上方训练“全部头”（只训练一个头不够："
                          "一层改成线性，它的每个头都要有映射），或载入保存好的全部头的映射。"),
    "hybrid_mode_layers": "指定层",
    "hybrid_map_hedgehog": "Hedgehog（已训练）",
    "hybrid_map_luna": "LUNA（已训练）",
    "hybrid_mode_greedy": "贪心",
    "learn_help_text": (
        "**第 1 部分：学出来的特征映射。** 有两种，都用 Adam 训练，让它们的注意力行去贴合模型的 softmax 行。"
        "**Hedgehog**：φ(x) = [softmax(Wx′+b), softmax(−Wx′−b)]，W 从单位矩阵出发。"
        "**LUNA**（参照 Shahbazi 等人 2025 年的工作）：φ(x) = e(x) · [ψ_c(w_c·x′ + b_c)]_c / √m，"
        "投影 w_c、通道函数 ψ_c（exp、softplus 与 relu² 的正系数组合）和逐词元的包络 e(x) 都是学出来的；"
        "它从 FAVOR+ 起步，查询和键共用同一个映射，所以它的核是正定的。"
        "损失是**逐行交叉熵** −Σⱼ Aᵢⱼ log Âᵢⱼ，等于 KL(A‖Â) 加上 A 的熵，所以它停在零以上。"
        "训练用 `assets/texts/train.txt`；对比中的每个数字都**只来自留出文本**（`heldout.txt`，与训练集不重叠）。"
        "LUNA 会和用同样设置训练的 Hedgehog 对比。FAVOR+ 用相同的 m；Taylor-2 的 m 由 d 决定（1 + d + d(d+1)/2）。"
        "一个头几秒钟就能训练完；全部头一起训练（MiniLM 共 72 个头；步数少一些，比如 150 步，也要一分钟以上）。"
        "模型菜单决定读取谁的注意力头：内置的 MiniLM、因果模型 SmolLM2-135M（30 层 × 9 个头；按它的因果 softmax "
        "训练和评判，每一行只比较它能看到的键），或服务器允许的其他模型。"
        "训练好的映射只属于你：只有当前浏览器会话的注意力图页和特征映射质量页会在训练它的模型和头上提供它。"
        "可以下载（safetensors 格式）留到讲课时再用，也可以用上传框重新载入。\n\n"
        "**第 2 部分：混合模型。** 把真实模型中某些层的注意力换成核注意力，比较它的句向量（余弦相似度）"
        "和注意力图（漂移）与原模型的差别。*贪心*从全部线性出发，每次加回一层最有帮助的 softmax 层。\n\n"
        "**第 3 部分：滑动窗口混合**（窗口内 w 个键用精确的 softmax，窗口外用线性核）"
        "就是**注意力图**页里的 *sliding window* 映射。"),
    "learn_steps": "训练步数",
    "learn_texts": "文本",
    "learn_train_count": "训练文本（train.txt）",
    "learn_heldout_count": "留出文本（heldout.txt）",
    "learn_train": "训练",
    "learn_stop": "停止",
    "learn_summary": "摘要",
    "learn_loss": "训练损失",
    "learn_table": "留出集对比（所覆盖各头的平均）",
    "learn_comparison": "留出集 KL、熵与单调性",
    "learn_heatmap": "各头 KL 之比（仅限多个头）",
    "learn_download": "下载训练好的映射（.safetensors）",
    "learn_upload": "载入保存的映射（.safetensors）",
    "learn_part2": "### 2 · 混合模型：部分层改为线性",
    "learn_map_status": "混合模型用的已训练映射",
    "hybrid_map": "线性映射",
    "hybrid_map_info": "用于被替换的层",
    "hybrid_mode": "哪些层改为线性",
    "hybrid_layers": "线性层（“指定层”模式）",
    "hybrid_k": "贪心：保留 k 层 softmax",
    "hybrid_m": "FAVOR+ 特征数 m",
    "hybrid_run": "运行混合模型",
    "hybrid_summary": "混合模型摘要",
    "hybrid_cosine": "与原模型的嵌入余弦相似度",
    "hybrid_drift": "各层注意力漂移",
    "hybrid_table": "各配置",
}



# ---------------------------------------------------------------------------------------
# Labels made from the tool tabs' words (explorer.words, no engine import): the names of
# the maps in the choices, the metrics of the head overview's menu, the metrics glossary.
# ---------------------------------------------------------------------------------------

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def map_key(label: str) -> str:
    """The key of a map's name in the choices: "FAVOR+ (orthogonal)" -> "map_favor_orthogonal"."""
    return "map_" + _slug(label)


def _add_word_labels() -> None:
    from .. import catalog
    from ..words import w
    from ..words.common import map_name

    for label in catalog.map_choices():
        for lang, table in STRINGS.items():
            table[map_key(label)] = map_name(label, lang)
    for key in catalog.OVERVIEW_METRICS:
        for lang, table in STRINGS.items():
            table["metric_" + key] = w(f"common.metric.{key}", lang)
    for method in catalog.SWEEP_METHODS:
        for lang, table in STRINGS.items():
            table["cx_method_" + method] = w(f"complexity.method.{method}", lang)
    for lang, table in STRINGS.items():
        order = dict.fromkeys([*catalog.HEADLINE_METRICS, *catalog.METRIC_INFO])
        lines = [w("common.glossary_line", lang, short=w(f"common.short.{key}", lang),
                   label=w(f"common.metric.{key}", lang), help=w(f"common.help.{key}", lang)) for key in order]
        lines.insert(1, w("common.glossary_line", lang, short=w("maps.spread_column", lang, k=SPREAD_SEEDS),
                          label=w("common.seed_spread", lang, k=SPREAD_SEEDS),
                          help=w("maps.spread_help", lang, more=SPREAD_SEEDS - 1)))
        table["maps_glossary"] = "\n".join(lines)


SPREAD_SEEDS = 5            # explorer.views.maps.SPREAD_SEEDS (the test holds them equal)


def map_choice(name: str) -> tuple:
    """(translated name, catalogue label) for a choice of maps: the value stays the label."""
    return (label(map_key(name)), name)


def metric_choice(key: str) -> tuple:
    """(translated label, key) for the head overview's metric menu."""
    return (label("metric_" + key), key)


STRINGS = {"en": EN, "zh": ZH}
_add_word_labels()

_I18N = gr.I18n(en={}, zh={})    # keys only; the dictionaries go to launch(i18n=translations())


def label(key: str):
    """A label the browser translates (an ``I18nData`` carrying ``key``)."""
    if key not in EN:
        raise KeyError(f"no UI string {key!r} in explorer.ui.i18n")
    return _I18N(key)



def engine_key(key: str) -> str:
    """The gradio key under which the engine's text ``key`` (the lecture's, or a tool tab's
    from ``explorer.words``) is registered."""
    return "lecture__" + key.replace(".", "_")


def engine_label(key: str):
    """A label from the engine's lecture text (e.g. a chapter control's ``label_key``)."""
    return _I18N(engine_key(key))


def text(key: str, lang: str) -> str:
    """A UI string in ``lang``, for what the server writes at run time."""
    return STRINGS[normal_lang(lang)][key]


# Keys gradio's own page looks up but its locale files lack: its status tracker announces a
# finished event to screen readers as i18n("common.complete"), which would read the raw key.
GRADIO_GAPS = {"common.complete": {"en": "Complete", "zh": "完成"}}


def translations() -> gr.I18n:
    """Every dictionary the browser needs: the UI's and the lecture's, for both languages."""
    from .. import words               # the tool tabs' run-time words
    from ..lecture.text import TEXT   # plain dictionaries, no engine import

    merged = {lang: dict(STRINGS[lang]) for lang in LANGS}
    for table in (TEXT, words.TEXT):
        for key, by_lang in table.items():
            if not all(isinstance(v, str) for v in by_lang.values()):
                continue            # lists (speaker notes) are shown by the page itself, not by gradio
            for lang in LANGS:
                merged[lang][engine_key(key)] = by_lang.get(lang) or by_lang.get(DEFAULT_LANG, key)
    for key, by_lang in GRADIO_GAPS.items():
        for lang in LANGS:
            merged[lang][key] = by_lang[lang]
    # Register Chinese under gradio's locale name too: a zh-CN browser finds it directly.
    return gr.I18n(**merged, **{GRADIO_LOCALES["zh"]: merged["zh"]})


# The tab row's ids (ui/__init__ gives each tab elem_id "tab-<id>"; gradio ids its button "<elem_id>-button").
TAB_KEYS = ("lecture", "maps", "quality", "state", "complexity", "learn")


def page_js() -> str:
    """The tab row in the chosen language from the first moment.

    gradio writes the tab buttons' labels once, in the locale the page starts in, and
    translates a tab's label again only when that tab is first shown: after a switch (or a
    link's lang=) the tabs not yet visited kept the other language. This wraps the language
    switch's browser half (assets/lecture.js, explorerSetLanguage) so that it also writes
    every tab button's label in the new language, and writes them again whenever gradio
    redraws the tab row."""
    import json

    labels = {lang: {key: STRINGS[lang][f"tab_{key}"] for key in TAB_KEYS} for lang in LANGS}
    return """() => {
  const LABELS = %s;
  const known = new Set(Object.values(LABELS).flatMap((table) => Object.values(table)));
  let current = null;
  const relabel = () => {
    const table = LABELS[current];
    if (!table) { return; }
    for (const [key, text] of Object.entries(table)) {
      const button = document.getElementById(`tab-${key}-button`);
      if (!button) { continue; }
      // Change the text node gradio wrote, not the button: gradio keeps its own reference to it.
      const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const shown = node.nodeValue.trim();
        if (known.has(shown) && shown !== text) { node.nodeValue = node.nodeValue.replace(shown, text); }
      }
    }
  };
  const setLanguage = window.explorerSetLanguage;
  window.explorerSetLanguage = async (lang) => {
    current = LABELS[lang] ? lang : 'en';
    relabel();
    const done = setLanguage ? await setLanguage(lang) : false;
    relabel();
    setTimeout(relabel, 100);
    return done;
  };
  let pending = false;
  new MutationObserver(() => {
    if (current && !pending) { pending = true; requestAnimationFrame(() => { pending = false; relabel(); }); }
  })
    .observe(document.body, { childList: true, subtree: true, characterData: true });
}""" % json.dumps(labels, ensure_ascii=False)
