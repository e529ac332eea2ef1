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

import gradio as gr

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
    "panel_source_info": "text: all-MiniLM-L6-v2 reads it",
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
    "state_seed_info": "random features and GLA gates",
    "state_gamma": "RetNet γ",
    "state_gamma_info": "decay per token",
    "state_strength": "GLA gate strength",
    "state_strength_info": "0 = never forget",
    "state_kind": "Decay shown in the step view",
    "state_run": "Run the RNN",
    "state_t": "Step t",
    "state_step": "One step",
    "state_curves": "Over time",
    "state_memory": "Memory",
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
    "learn_help": "What this tab shows",
    "learn_part1": "### 1 · Learn a feature map that imitates softmax",
    "learn_head_info": "all heads: one joint training, needed for the hybrid",
    "learn_m_info": "Hedgehog and FAVOR+",
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
    "learn_heatmap": "Per-head KL ratio (all heads only)",
    "learn_download": "Trained map (.pt) to download",
    "learn_upload": "Load a saved map (.pt)",
    "learn_part2": "### 2 · Hybrid model: some layers linear",
    "learn_map_status": "Hedgehog for the hybrid",
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
    "panel_source_info": "text：由 all-MiniLM-L6-v2 读入",
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
    "state_seed_info": "随机特征与 GLA 门",
    "state_gamma": "RetNet 衰减 γ",
    "state_gamma_info": "每个词元的衰减",
    "state_strength": "GLA 门控强度",
    "state_strength_info": "0 = 从不遗忘",
    "state_kind": "单步视图中的衰减",
    "state_run": "运行 RNN",
    "state_t": "第 t 步",
    "state_step": "单步",
    "state_curves": "随时间变化",
    "state_memory": "内存",
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
    "learn_help": "本页展示什么",
    "learn_part1": "### 1 · 学一个模仿 softmax 的特征映射",
    "learn_head_info": "all heads：一次联合训练，混合模型要用",
    "learn_m_info": "用于 Hedgehog 与 FAVOR+",
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
    "learn_heatmap": "各头 KL 比（仅 all heads）",
    "learn_download": "下载训练好的映射（.pt）",
    "learn_upload": "载入保存的映射（.pt）",
    "learn_part2": "### 2 · 混合模型：部分层改为线性",
    "learn_map_status": "混合模型用的 Hedgehog",
    "hybrid_map": "线性映射",
    "hybrid_map_info": "用于被替换的层",
    "hybrid_mode": "哪些层改为线性",
    "hybrid_layers": "线性层（chosen layers 模式）",
    "hybrid_k": "贪心：保留 k 层 softmax",
    "hybrid_m": "FAVOR+ 特征数 m",
    "hybrid_run": "运行混合模型",
    "hybrid_summary": "混合模型摘要",
    "hybrid_cosine": "与原模型的嵌入余弦相似度",
    "hybrid_drift": "各层注意力漂移",
    "hybrid_table": "各配置",
}

STRINGS = {"en": EN, "zh": ZH}

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


def normal_lang(lang) -> str:
    """'zh', 'zh-CN', 'zh-Hans-CN' ... -> 'zh'; anything not offered -> the default."""
    code = str(lang or "").strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else DEFAULT_LANG


def text(key: str, lang: str) -> str:
    """A UI string in ``lang``, for what the server writes at run time."""
    return STRINGS[normal_lang(lang)][key]


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
    # Register Chinese under gradio's locale name too: a zh-CN browser finds it directly.
    return gr.I18n(**merged, **{GRADIO_LOCALES["zh"]: merged["zh"]})
