"""Every sentence the lecture shows, in English ("en") and Simplified Chinese ("zh").

The Chinese is written for this app, not taken from the article. Keys:

    ch{i}.title / ch{i}.claim            the chapter's heading and its claim (2-4 sentences)
    ch{i}.fig{j}.title                   a figure's title (may hold {placeholders})
    axis.*                               axis labels, shared between figures
    ctl.*                                control labels (the UI builds controls from these)
    notice.*                             notices, formatted with the values they name
    legend.*, num.*, rk.*                legend entries, printed numbers, the reverse-kernel table

``t(key, lang, **values)`` returns the text in ``lang`` (English when the language is not
offered), formatted with ``values``. A missing key is a KeyError: a blank title is a bug.
"""

from __future__ import annotations

import re

LANGS = ("en", "zh")

# A sentence that makes the point on every chapter: a pronoun that must find its noun far
# back ("it" -> "the trophy"), repeated words, and enough tokens for the state to fill.
DEFAULT_TEXT = ("The trophy did not fit into the brown suitcase because it was too big, so Anna took the trophy "
                "out, packed the suitcase again, and carried the heavy trophy in her arms all the way home.")

TEXT: dict[str, dict[str, str]] = {
    "lecture.title": {"en": "Linear attention through kernels: a lecture", "zh": "从核方法看线性注意力：讲座"},

    # ---------------------------------------------------------------- chapter titles and claims
    "ch0.title": {"en": "0 · The bottleneck", "zh": "0 · 瓶颈"},
    "ch0.claim": {
        "en": "Softmax attention lets every token look at every other token, so a sequence of N tokens makes N² "
              "comparisons and stores an N × N table. Going from 512 to 100K tokens multiplies that table by "
              "about 38,000. The rest of this lecture is about never building it.",
        "zh": "softmax 注意力让每个词元都去比较所有其他词元，N 个词元就要做 N² 次比较，还要存一张 N × N 的表。"
              "序列从 512 拉长到 10 万，这张表会大约膨胀 3.8 万倍。接下来的各章讲的，都是怎样绕开这张表。"},
    "ch1.title": {"en": "1 · Attention is kernel regression", "zh": "1 · 注意力就是核回归"},
    "ch1.claim": {
        "en": "Nadaraya and Watson (1964) predicted a value at x as an average of observed values, each weighted "
              "by a kernel K(x, xⱼ) that says how close xⱼ is. Put a query in place of x, the keys in place of the "
              "xⱼ, the value rows in place of the yⱼ and exp(q·k/√d) as the kernel: that is softmax attention, "
              "exactly, as the printed difference to the model's own output shows.",
        "zh": "Nadaraya 与 Watson 在 1964 年提出：在 x 处的预测等于观测值的加权平均，权重由核函数 K(x, xⱼ) "
              "给出，衡量 xⱼ 离 x 有多近。把 x 换成查询向量，把 xⱼ 换成键，把 yⱼ 换成值向量，核取 exp(q·k/√d)，"
              "得到的正是 softmax 注意力。下面打印的与模型自身输出的差值说明二者完全一致。"},
    "ch2.title": {"en": "2 · Associativity", "zh": "2 · 结合律"},
    "ch2.claim": {
        "en": "If the kernel splits as φ(q)·φ(k), the product (φ(Q)φ(K)ᵀ)V can be regrouped as φ(Q)(φ(K)ᵀV). "
              "The answer is the same, but the middle matrix shrinks from N × N to m × d: the cost falls from "
              "quadratic to linear in N. Softmax cannot be regrouped like this, because exp does not split.",
        "zh": "如果核能拆成 φ(q)·φ(k)，乘积 (φ(Q)φ(K)ᵀ)V 就可以改写成 φ(Q)(φ(K)ᵀV)。结果不变，"
              "中间矩阵却从 N × N 缩到 m × d，计算量从随 N 平方增长变成线性增长。softmax 做不到这一步，"
              "因为 exp 无法拆成两个向量的内积。"},
    "ch3.title": {"en": "3 · Choosing the kernel", "zh": "3 · 选择核函数"},
    "ch3.claim": {
        "en": "exp(s) has no finite feature map, so every linear method picks a finite φ whose kernel only "
              "resembles it: a truncated Taylor series, elu+1, or random features. Random features are right on "
              "average, but their variance grows like exp(‖q′+k′‖²): on a real head, where the vectors are long, "
              "the m they need is far beyond what anyone uses.",
        "zh": "exp(s) 没有有限维的特征映射，所以每种线性方法都只能选一个有限的 φ，让它的核尽量像 exp："
              "截断的泰勒级数、elu+1，或随机特征。随机特征在期望上是准的，但方差随 exp(‖q′+k′‖²) 增长；"
              "在真实的注意力头上向量很长，需要的 m 远远超出实际可用的规模。"},
    "ch4.title": {"en": "4 · Linear attention is an RNN", "zh": "4 · 线性注意力是一个 RNN"},
    "ch4.claim": {
        "en": "With a causal mask, the sum φ(K)ᵀV up to token t is a running state: S_t = S_(t−1) + φ(k_t)v_tᵀ, and "
              "the output is read from it as φ(q_t)S_t / φ(q_t)z_t. The state has a fixed size, unlike a KV cache "
              "that grows with every token. But it only ever adds: old keys are never removed, so recall of any "
              "one of them fades as the sequence grows.",
        "zh": "加上因果掩码后，到第 t 个词元为止的 φ(K)ᵀV 就是一个不断累加的状态：S_t = S_(t−1) + φ(k_t)v_tᵀ，"
              "输出按 φ(q_t)S_t / φ(q_t)z_t 读出。这个状态大小固定，而 KV 缓存每多一个词元就变大一点。"
              "可是状态只加不减，旧的键永远留在里面，序列越长，想取回其中某一个就越难。"},
    "ch5.title": {"en": "5 · Closing the gap", "zh": "5 · 缩小差距"},
    "ch5.claim": {
        "en": "Three repairs came after 2020. Decay and gates (RetNet, GLA) let the state forget, trading old keys "
              "for clean recent ones. Learned maps (Hedgehog) train φ to copy softmax's sharp rows. Hybrids keep a "
              "few softmax layers and make the rest linear.",
        "zh": "2020 年之后出现了三类补救办法。衰减与门控（RetNet、GLA）让状态学会遗忘，用旧信息换来清晰的新信息；"
              "可学习的映射（Hedgehog）训练 φ 去模仿 softmax 尖锐的权重分布；混合模型保留少数几层 softmax，"
              "其余层改成线性。"},
    "ch6.title": {"en": "6 · The trade-off", "zh": "6 · 权衡"},
    "ch6.claim": {
        "en": "Every map buys speed with accuracy: more features cost more and usually copy softmax better. Plotted "
              "as cost against the distance to softmax on this text, the useful maps lie on the Pareto frontier, "
              "where no other map is both cheaper and closer. The 2020–2025 roadmap carries the distance each "
              "step's map reaches here, measured rather than quoted, so a step that does not help on this text "
              "(an untrained learned map, say) shows it.",
        "zh": "每种映射都在用精度换速度：特征越多，代价越高，通常也越接近 softmax。以代价为横轴、以在这段文本上"
              "与 softmax 的差距为纵轴，真正值得用的映射都落在帕累托前沿上：没有别的映射既更便宜又更接近。"
              "2020–2025 年的路线图标出的是每一步的映射在这里实测的差距，而不是引用的数字；哪一步在这段文本上"
              "没有帮助（比如未经训练的可学习映射），图上就会显示出来。"},

    # ---------------------------------------------------------------- figure titles
    "ch0.fig1.title": {"en": "N × N attention table at N = {n}", "zh": "N = {n} 时的 N × N 注意力表"},
    "ch0.fig2.title": {"en": "From 512 to 100K tokens: pairs and memory", "zh": "从 512 到 10 万个词元：词元对数与内存"},
    "ch1.fig1.title": {"en": "Kernel regression in 1-D (h = {h}, x = {x})", "zh": "一维核回归（h = {h}，x = {x}）"},
    "ch1.fig2.title": {"en": "Query “{token}”: kernel weights over keys, and the output",
                       "zh": "查询“{token}”：各个键上的核权重与输出"},
    "ch2.fig1.title": {"en": "Two orders, one result (N = {n}, d = {d}, m = {m})",
                       "zh": "两种乘法顺序，同一个结果（N = {n}，d = {d}，m = {m}）"},
    "ch2.fig2.title": {"en": "Cost of each order at N = {n}", "zh": "N = {n} 时两种顺序的代价"},
    "word.linear": {"en": "linear", "zh": "线性"},
    "ch4.fig2.note": {"en": "m = {m}: state {state}; equal at t ≈ {t}", "zh": "m = {m}：状态 {state}；t ≈ {t} 时两者相等"},
    "ch4.fig1.compare": {"en": "recurrent o_t vs parallel", "zh": "循环形式的 o_t 对比并行形式"},
    "ch3.fig4.note": {"en": "m for 10 % error: {real} ({real_label}) · {well} ({well_label})",
                      "zh": "误差 10 % 所需的 m：{real}（{real_label}）· {well}（{well_label}）"},
    "ch2.fig2.note": {
        "en": "FLOPs ×{flops} · time ×{time} at N = {timed_n} (FLOP model there ×{timed_flops}; matmul "
              "{gflops} GFLOP/s now) · N = 100K, d = 128: ×{article} (N/d = {leading})",
        "zh": "FLOPs ×{flops} · 实测耗时 ×{time}（N = {timed_n}；该处 FLOP 模型 ×{timed_flops}；"
              "当前矩阵乘法 {gflops} GFLOP/s）· N = 10 万、d = 128 时：×{article}（N/d = {leading}）"},
    "ch3.fig1.title": {"en": "exp(s) and its Taylor truncations over this head's logits",
                       "zh": "exp(s) 及其泰勒截断，覆盖本注意力头的 logit 范围"},
    "ch3.fig2.title": {"en": "Kernel profiles: φ(q)·φ(k) against exp(q·k/√d)", "zh": "核函数剖面：φ(q)·φ(k) 对比 exp(q·k/√d)"},
    "ch3.fig3.title": {"en": "Random features: error as m grows", "zh": "随机特征：误差随 m 的变化"},
    "ch3.fig4.title": {"en": "Why the real head converges slowly: |q′| and |k′|",
                       "zh": "真实注意力头为何收敛慢：|q′| 与 |k′|"},
    "ch4.fig1.title": {"en": "Step t = {t} (“{token}”): S_t = S_(t−1) + φ(k_t)v_tᵀ",
                       "zh": "第 t = {t} 步（“{token}”）：S_t = S_(t−1) + φ(k_t)v_tᵀ"},
    "ch4.fig2.title": {"en": "Memory: fixed state against a growing KV cache", "zh": "内存：固定大小的状态与不断增长的 KV 缓存"},
    "ch4.fig3.title": {"en": "It never forgets, so it cannot recall: cosine of the recalled value",
                       "zh": "从不遗忘，因而难以取回：取回值的余弦相似度"},
    "ch5.fig1.title": {"en": "Forgetting on purpose: recall of early and recent keys",
                       "zh": "有意遗忘：早期键与近期键的取回效果"},
    "ch5.fig2.title": {"en": "Learned map against fixed maps: row KL to softmax", "zh": "可学习映射与固定映射：与 softmax 的逐行 KL"},
    "ch5.fig3.title": {"en": "Hybrid model: sentence embedding as softmax layers are kept",
                       "zh": "混合模型：保留 softmax 层数与句向量的相似度"},
    "ch6.fig1.title": {"en": "Cost against quality, layer {layer}: the Pareto frontier",
                       "zh": "第 {layer} 层的代价与质量：帕累托前沿"},
    "ch6.fig2.title": {"en": "Roadmap 2020 → 2025, quality measured on this text",
                       "zh": "2020 → 2025 路线图，质量为本文本上的实测值"},

    # ---------------------------------------------------------------- axes
    "axis.n": {"en": "sequence length N (tokens)", "zh": "序列长度 N（词元数）"},
    "axis.pairs": {"en": "pairs N²", "zh": "词元对数 N²"},
    "axis.bytes": {"en": "bytes", "zh": "字节"},
    "axis.flops": {"en": "FLOPs per head", "zh": "每个头的浮点运算次数"},
    "axis.x": {"en": "x", "zh": "x"},
    "axis.y": {"en": "y", "zh": "y"},
    "axis.weight": {"en": "weight", "zh": "权重"},
    "axis.heaviest_keys": {"en": "the {k} heaviest keys", "zh": "权重最大的 {k} 个键"},
    "ch1.fig2.rest": {"en": "the other {n} keys: weight {w} in all", "zh": "其余 {n} 个键的权重合计 {w}"},
    "axis.value_dim": {"en": "value dimension", "zh": "值向量的维度"},
    "axis.value": {"en": "value", "zh": "数值"},
    "axis.s": {"en": "logit s = q·k/√d", "zh": "logit s = q·k/√d"},
    "axis.kernel": {"en": "kernel value", "zh": "核函数值"},
    "axis.count": {"en": "pairs (count)", "zh": "词元对数目"},
    "axis.exact": {"en": "exp(q·k/√d)", "zh": "exp(q·k/√d)"},
    "axis.approx": {"en": "φ(q)·φ(k)", "zh": "φ(q)·φ(k)"},
    "axis.m": {"en": "features m", "zh": "特征数 m"},
    "axis.map_error": {"en": "map error ‖Â − A‖/‖A‖", "zh": "注意力图误差 ‖Â − A‖/‖A‖"},
    "axis.norm": {"en": "|x′| = |x| / d^¼", "zh": "|x′| = |x| / d^¼"},
    "axis.tokens_seen": {"en": "tokens seen t", "zh": "已读词元数 t"},
    "axis.lag": {"en": "tokens written after (early) or before (recent) the target",
                 "zh": "目标之后（早期）或之前（近期）写入的词元数"},
    "axis.cosine": {"en": "cosine(recalled, stored)", "zh": "余弦（取回值，存入值）"},
    "axis.kl": {"en": "row KL(softmax ‖ map), nats", "zh": "逐行 KL(softmax ‖ 映射)，奈特"},
    "axis.median_kl": {"en": "median row KL to softmax (nats)", "zh": "与 softmax 的逐行 KL 中位数（奈特）"},
    "axis.flops_token": {"en": "linear-path FLOPs per token", "zh": "线性路径每个词元的浮点运算次数"},
    "axis.k_softmax": {"en": "softmax layers kept k", "zh": "保留的 softmax 层数 k"},
    "axis.embedding_cos": {"en": "cosine to the original sentence embedding", "zh": "与原模型句向量的余弦相似度"},
    "axis.year": {"en": "year", "zh": "年份"},
    "axis.feature": {"en": "feature (row of S)", "zh": "特征（S 的行）"},
    "axis.order": {"en": "order", "zh": "乘法顺序"},
    "axis.seconds": {"en": "seconds (measured now)", "zh": "秒（当场实测）"},

    # ---------------------------------------------------------------- legends and numbers
    "legend.float32": {"en": "N × N in float32", "zh": "float32 的 N × N 表"},
    "legend.float16": {"en": "N × N in float16", "zh": "float16 的 N × N 表"},
    "legend.pairs": {"en": "pairs", "zh": "词元对"},
    "legend.points": {"en": "noisy observations", "zh": "带噪声的观测点"},
    "legend.truth": {"en": "true function", "zh": "真实函数"},
    "legend.estimate": {"en": "Nadaraya–Watson estimate", "zh": "Nadaraya–Watson 估计"},
    "legend.weights": {"en": "weights at x", "zh": "x 处的权重"},
    "legend.query": {"en": "query x", "zh": "查询点 x"},
    "legend.nw_output": {"en": "Σ wⱼ vⱼ (computed here)", "zh": "Σ wⱼ vⱼ（此处计算）"},
    "legend.model_output": {"en": "the model's attention output", "zh": "模型自身的注意力输出"},
    "legend.engine_output": {"en": "softmax(QKᵀ/√d)V by the engine (no model here)",
                             "zh": "引擎计算的 softmax(QKᵀ/√d)V（此处没有模型）"},
    "legend.left": {"en": "(φ(Q)φ(K)ᵀ)V", "zh": "(φ(Q)φ(K)ᵀ)V"},
    "legend.right": {"en": "φ(Q)(φ(K)ᵀV)", "zh": "φ(Q)(φ(K)ᵀV)"},
    "legend.exp": {"en": "exp(s)", "zh": "exp(s)"},
    "legend.order": {"en": "Taylor order {k}", "zh": "{k} 阶泰勒"},
    "legend.taylor1_negative": {"en": "1 + s < 0: order 1 is negative", "zh": "1 + s < 0：一阶展开为负"},
    "legend.identity": {"en": "identity line", "zh": "对角线 y = x"},
    "legend.well": {"en": "well-conditioned sample", "zh": "条件良好的样本"},
    "legend.real": {"en": "this head", "zh": "本注意力头"},
    "legend.iid": {"en": "IID", "zh": "独立同分布"},
    "legend.orthogonal": {"en": "orthogonal", "zh": "正交"},
    "legend.q_norm": {"en": "|q′|", "zh": "|q′|"},
    "legend.k_norm": {"en": "|k′|", "zh": "|k′|"},
    "legend.kv_cache": {"en": "KV cache (softmax)", "zh": "KV 缓存（softmax）"},
    "legend.state": {"en": "state S and z (linear)", "zh": "状态 S 与 z（线性）"},
    "legend.early": {"en": "early key", "zh": "早期的键"},
    "legend.recent": {"en": "recent key", "zh": "近期的键"},
    "legend.none": {"en": "no decay", "zh": "无衰减"},
    "legend.retnet": {"en": "RetNet γ", "zh": "RetNet γ"},
    "legend.gla": {"en": "GLA gates", "zh": "GLA 门控"},
    "legend.frontier": {"en": "Pareto frontier", "zh": "帕累托前沿"},
    "legend.maps": {"en": "maps", "zh": "各映射"},
    "legend.update": {"en": "φ(k_t)v_tᵀ", "zh": "φ(k_t)v_tᵀ"},
    "legend.state_t": {"en": "S_t", "zh": "S_t"},
    "num.max_diff": {"en": "max |difference|", "zh": "最大绝对差"},
    "note.kl_undefined": {"en": "{map}: median KL undefined", "zh": "{map}：KL 中位数无定义"},
    "note.kl_zero": {"en": "{map}: median KL {kl}, not drawn on the log axis",
                     "zh": "{map}：KL 中位数为 {kl}，无法画在对数坐标上"},
    "note.kl_not_drawn": {"en": "{map}: {count} rows with KL ≤ 0 not drawn on the log axis",
                          "zh": "{map}：{count} 行 KL ≤ 0，无法画在对数坐标上"},

    # ---------------------------------------------------------------- the reverse kernel trick (ch 3)
    "rk.header.aspect": {"en": "", "zh": ""},
    "rk.header.svm": {"en": "SVM: the kernel trick", "zh": "SVM：核技巧"},
    "rk.header.linear": {"en": "Linear attention: the reverse", "zh": "线性注意力：反过来用"},
    "rk.row.goal.aspect": {"en": "what it avoids", "zh": "想避免什么"},
    "rk.row.goal.svm": {"en": "ever writing φ(x) down: it may be infinite", "zh": "显式写出 φ(x)：它可能是无穷维的"},
    "rk.row.goal.linear": {"en": "ever forming the N × N kernel matrix", "zh": "构造 N × N 的核矩阵"},
    "rk.row.works.aspect": {"en": "what it works with", "zh": "实际计算的对象"},
    "rk.row.works.svm": {"en": "K(x, y) for every pair of points", "zh": "每一对样本之间的 K(x, y)"},
    "rk.row.works.linear": {"en": "φ(q), φ(k) for every token", "zh": "每个词元的 φ(q) 与 φ(k)"},
    "rk.row.phi.aspect": {"en": "the feature map", "zh": "特征映射"},
    "rk.row.phi.svm": {"en": "rich and high-dimensional, never computed", "zh": "丰富、高维，但从不计算"},
    "rk.row.phi.linear": {"en": "small on purpose (m features), computed explicitly", "zh": "刻意选得很小（m 维），并显式计算"},
    "rk.row.cost.aspect": {"en": "cost grows with", "zh": "代价随什么增长"},
    "rk.row.cost.svm": {"en": "the number of points squared", "zh": "样本数的平方"},
    "rk.row.cost.linear": {"en": "N × m × d: linear in N", "zh": "N × m × d：随 N 线性增长"},
    "rk.row.price.aspect": {"en": "the price", "zh": "代价是什么"},
    "rk.row.price.svm": {"en": "none in accuracy: the kernel is exact", "zh": "精度上没有损失：核是精确的"},
    "rk.row.price.linear": {"en": "the kernel is only approximately exp", "zh": "核只能近似 exp"},

    # ---------------------------------------------------------------- controls
    "ctl.n": {"en": "sequence length N", "zh": "序列长度 N"},
    "ctl.d": {"en": "head dimension d", "zh": "头维度 d"},
    "ctl.m": {"en": "features m", "zh": "特征数 m"},
    "ctl.h": {"en": "bandwidth h", "zh": "带宽 h"},
    "ctl.x": {"en": "query x", "zh": "查询点 x"},
    "ctl.points": {"en": "points", "zh": "观测点数"},
    "ctl.seed": {"en": "seed", "zh": "随机种子"},
    "ctl.layer": {"en": "layer", "zh": "层"},
    "ctl.head": {"en": "head", "zh": "注意力头"},
    "ctl.query": {"en": "query token", "zh": "查询词元"},
    "ctl.map": {"en": "feature map", "zh": "特征映射"},
    "ctl.orthogonal": {"en": "orthogonal features", "zh": "正交随机特征"},
    "ctl.t": {"en": "step t", "zh": "步数 t"},
    "ctl.gamma": {"en": "RetNet γ", "zh": "RetNet γ"},
    "ctl.strength": {"en": "gate strength", "zh": "门控强度"},
    "ctl.train": {"en": "train Hedgehog now", "zh": "现在训练 Hedgehog"},
    "ctl.steps": {"en": "training steps", "zh": "训练步数"},
    "ctl.hybrid": {"en": "which softmax layers to keep", "zh": "保留哪些 softmax 层"},
    "ctl.hybrid_map": {"en": "map of the linear layers", "zh": "线性层使用的映射"},
    "choice.greedy": {"en": "best first (greedy)", "zh": "贪心：先保留最有用的"},
    "choice.last": {"en": "the last k layers", "zh": "最后 k 层"},

    # ---------------------------------------------------------------- notices
    "notice.unk": {
        "en": "{count} of {total} tokens are [UNK]: characters outside the embedded model's (MiniLM's) "
              "vocabulary, so they all share one embedding and the figures treat them as the same word.",
        "zh": "{total} 个词元中有 {count} 个是 [UNK]：这些字符不在内置模型（MiniLM）的词表里，"
              "它们共用同一个向量，图中会被当作同一个词。"},
    "notice.no_model_output": {
        "en": "This sample has no model behind it, so the output is compared with softmax(QKᵀ/√d)V computed by the "
              "engine instead of a model's own attention output.",
        "zh": "这个样本不是由模型产生的，因此输出与引擎计算的 softmax(QKᵀ/√d)V 比较，而不是与模型自身的注意力输出比较。"},
    "notice.timed_cap": {
        "en": "N = {n} is above {cap}: the left order would hold {cells} weights, so times and the output "
              "difference are measured at N = {cap}; sizes and FLOPs are for N = {n}.",
        "zh": "N = {n} 超过 {cap}：左侧顺序需要存 {cells} 个权重，所以耗时和输出差异在 N = {cap} 处实测；"
              "尺寸和运算量仍按 N = {n} 计算。"},
    "notice.random_data": {
        "en": "Times are measured on seeded random Q, K, V of this size (the text has only {tokens} tokens).",
        "zh": "耗时在这个规模的随机 Q、K、V（固定种子）上实测（这段文本只有 {tokens} 个词元）。"},
    "notice.no_rf_theory": {
        "en": "The FAVOR+ variance formula (explorer.maps.rf_theory) is not in this build, so the m it asks for is not shown.",
        "zh": "本版本中没有 FAVOR+ 方差公式模块（explorer.maps.rf_theory），因此不显示它所需的 m。"},
    "notice.hedgehog_untrained": {
        "en": "No trained Hedgehog for layer {layer}, head {head} yet: showing the untrained map (W = I). Press "
              "“train Hedgehog now” to train it on the training texts (the first run also reads those texts "
              "through the model, which takes the longest).",
        "zh": "第 {layer} 层第 {head} 个头还没有训练好的 Hedgehog：图中是未训练的映射（W = I）。"
              "点击“现在训练 Hedgehog”即可在训练文本上训练（第一次还要让模型读一遍这些文本，耗时最长）。"},
    "notice.recall_synthetic": {
        "en": "Recall is probed with random keys and values of this head's dimension (d = {d}), written into the "
              "state of the chosen map: it shows the memory, not this text.",
        "zh": "取回实验使用与本头维度相同（d = {d}）的随机键和值，写入所选映射的状态：它测的是记忆本身，与这段文本无关。"},
    "notice.hybrid_no_model": {
        "en": "The hybrid panel needs the embedded model reading a text; it is empty for random or uploaded data.",
        "zh": "混合模型面板需要内置模型读取文本；随机数据或上传数据时此面板为空。"},
    "notice.causal_roadmap": {
        "en": "RetNet's decay is causal: its point compares causal maps (keys j ≤ i) with causal softmax on the "
              "same heads.",
        "zh": "RetNet 的衰减只用于因果注意力：该点比较的是同一批头上因果的映射（只看 j ≤ i 的键）与因果 softmax。"},
    "notice.undefined_kl": {
        "en": "{map}: KL is undefined on {count} of {rows} rows (weights ≤ 0 where softmax has mass); the median is "
              "over the other rows.",
        "zh": "{map}：{rows} 行中有 {count} 行 KL 无定义（softmax 有权重的地方该映射的权重 ≤ 0），中位数只取其余各行。"},
    "notice.not_shown_log": {
        "en": "{map}: {count} of {pairs} kernel values are ≤ 0 and cannot be drawn on log axes.",
        "zh": "{map}：{pairs} 个核函数值中有 {count} 个 ≤ 0，无法画在对数坐标上。"},
    "notice.sides_compressed": {
        "en": "sides compressed on a log scale (side = size^a) so N × N fits; the printed sizes are the true ones",
        "zh": "边长按对数尺度压缩（边长 = 尺寸^a），以便画下 N × N；标注的是真实尺寸"},
    "notice.profile_subset": {
        "en": "Kernel profiles show {shown} of {pairs} pairs (a seeded random subset).",
        "zh": "核函数剖面只画出 {pairs} 对中的 {shown} 对（固定种子的随机子集）。"},
}


def t(key: str, lang: str = "en", **values) -> str:
    """The text of ``key`` in ``lang`` ("en" or "zh"; anything else falls back to English),
    formatted with ``values``."""
    entry = TEXT[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


# ---------------------------------------------------------------- the numbers table
# Labels of the keys of ``ChapterView.numbers``: plain keys, then the per-map / per-step
# families, whose part in brackets (or suffix) is a name that stays as it is.
NUMBER_LABELS: dict[str, dict[str, str]] = {
    "n": {"en": "N (tokens)", "zh": "N（词元数）"},
    "d": {"en": "d (head dimension)", "zh": "d（头维度）"},
    "m": {"en": "m (features)", "zh": "m（特征数）"},
    "t": {"en": "step t", "zh": "第 t 步"},
    "pairs": {"en": "token pairs (N²)", "zh": "词元对数（N²）"},
    "bytes_f32": {"en": "N × N table, float32 (bytes)", "zh": "N × N 表，float32（字节）"},
    "bytes_f16": {"en": "N × N table, float16 (bytes)", "zh": "N × N 表，float16（字节）"},
    "quadratic_flops": {"en": "FLOPs, softmax order (N²)", "zh": "浮点运算数，softmax 顺序（N²）"},
    "linear_flops": {"en": "FLOPs, linear order", "zh": "浮点运算数，线性顺序"},
    "flop_ratio": {"en": "FLOP ratio, quadratic / linear", "zh": "浮点运算数之比（平方 / 线性）"},
    "article_n_from": {"en": "article's step: N from", "zh": "文中的跨度：起点 N"},
    "article_n_to": {"en": "article's step: N to", "zh": "文中的跨度：终点 N"},
    "article_pairs_from": {"en": "article's step: pairs at the start", "zh": "文中的跨度：起点的词元对数"},
    "article_pairs_to": {"en": "article's step: pairs at the end", "zh": "文中的跨度：终点的词元对数"},
    "article_growth": {"en": "article's step: growth of the pairs (×)", "zh": "文中的跨度：词元对数增长倍数"},
    "fx": {"en": "f̂(x), the 1-D estimate", "zh": "f̂(x)，一维估计值"},
    "max_abs_diff": {"en": "max |difference| to the reference", "zh": "与参照的最大绝对差"},
    "max_rel_diff": {"en": "max relative difference", "zh": "最大相对差"},
    "query": {"en": "query position", "zh": "查询位置"},
    "top_weight": {"en": "largest kernel weight", "zh": "最大的核权重"},
    "timed_n": {"en": "N timed live", "zh": "实测计时的 N"},
    "left_flops": {"en": "FLOPs, (φ(Q)φ(K)ᵀ)V", "zh": "浮点运算数，(φ(Q)φ(K)ᵀ)V"},
    "right_flops": {"en": "FLOPs, φ(Q)(φ(K)ᵀV)", "zh": "浮点运算数，φ(Q)(φ(K)ᵀV)"},
    "left_intermediate_bytes": {"en": "N × N intermediate (bytes)", "zh": "N × N 中间矩阵（字节）"},
    "right_intermediate_bytes": {"en": "m × d intermediate (bytes)", "zh": "m × d 中间矩阵（字节）"},
    "left_seconds": {"en": "time, (φ(Q)φ(K)ᵀ)V (s)", "zh": "耗时，(φ(Q)φ(K)ᵀ)V（秒）"},
    "right_seconds": {"en": "time, φ(Q)(φ(K)ᵀV) (s)", "zh": "耗时，φ(Q)(φ(K)ᵀV)（秒）"},
    "time_ratio": {"en": "time ratio, left / right order", "zh": "耗时之比（左 / 右顺序）"},
    "timed_flop_ratio": {"en": "FLOP ratio at the timed N", "zh": "计时 N 处的浮点运算数之比"},
    "article_model_ratio": {"en": "FLOP ratio at N = 100K, d = 128", "zh": "N = 10 万、d = 128 时的浮点运算数之比"},
    "article_leading_ratio": {"en": "N / d at N = 100K, d = 128", "zh": "N = 10 万、d = 128 时的 N / d"},
    "matmul_gflops": {"en": "matrix multiply rate now (GFLOP/s)", "zh": "当前矩阵乘法速度（GFLOP/s）"},
    "m_required": {"en": "m for 10 % error, this head", "zh": "误差 10 % 所需的 m，本注意力头"},
    "m_required_well": {"en": "m for 10 % error, well-conditioned sample",
                        "zh": "误差 10 % 所需的 m，条件良好的样本"},
    "log10_m_required": {"en": "log₁₀ of m for 10 % error, this head", "zh": "误差 10 % 所需 m 的 log₁₀，本注意力头"},
    "log10_m_required_well": {"en": "log₁₀ of m for 10 % error, well-conditioned sample",
                              "zh": "误差 10 % 所需 m 的 log₁₀，条件良好的样本"},
    "s_min": {"en": "smallest logit s", "zh": "最小的 logit s"},
    "s_max": {"en": "largest logit s", "zh": "最大的 logit s"},
    "negative_taylor1_fraction": {"en": "share of pairs with 1 + s < 0", "zh": "1 + s < 0 的词元对比例"},
    "q_norm_median": {"en": "median ‖q′‖", "zh": "‖q′‖ 的中位数"},
    "k_norm_median": {"en": "median ‖k′‖", "zh": "‖k′‖ 的中位数"},
    "rf_error_real_m_max_orthogonal": {"en": "random-feature error at the largest m, this head (orthogonal)",
                                       "zh": "最大 m 处的随机特征误差，本注意力头（正交）"},
    "rf_error_well_m_max_orthogonal": {"en": "random-feature error at the largest m, well-conditioned (orthogonal)",
                                       "zh": "最大 m 处的随机特征误差，条件良好的样本（正交）"},
    "state_bytes": {"en": "state size (bytes)", "zh": "状态大小（字节）"},
    "kv_bytes_at_n": {"en": "KV cache at this N (bytes)", "zh": "此 N 下的 KV 缓存（字节）"},
    "break_even_tokens": {"en": "tokens where state and KV cache are equal", "zh": "状态与 KV 缓存一样大时的词元数"},
}

# key families: (regular expression, label with {name} for what the key carries)
_NUMBER_FAMILIES = (
    (r"kernel_rel_error\[(?P<name>.+)\]", {"en": "kernel relative error, {name}", "zh": "核函数相对误差，{name}"}),
    (r"mean_kl\[(?P<name>.+)\]", {"en": "mean row KL to softmax, {name}", "zh": "与 softmax 的平均逐行 KL，{name}"}),
    (r"median_kl\[(?P<name>.+)\]", {"en": "median row KL to softmax, {name}",
                                      "zh": "与 softmax 的逐行 KL 中位数，{name}"}),
    (r"roadmap\[(?P<name>.+)\]", {"en": "roadmap {name}: median row KL", "zh": "路线图 {name}：逐行 KL 中位数"}),
    (r"recent_minus_early_at_(?P<lag>\d+)\[(?P<kind>\w+)\]",
     {"en": "recall at lag {lag}, recent minus early key, {name}", "zh": "滞后 {lag} 时近期键减早期键的取回，{name}"}),
    (r"recall_lag_(?P<lag>\d+)", {"en": "recall cosine at lag {lag}", "zh": "滞后 {lag} 时的取回余弦"}),
    (r"hybrid_cosine_k(?P<k>\d+)", {"en": "sentence-embedding cosine, {k} softmax layers kept",
                                     "zh": "句向量余弦，保留 {k} 层 softmax"}),
)


def number_label(key: str, lang: str = "en") -> str:
    """A readable label, in ``lang``, for a key of a chapter's ``numbers`` dict
    ("median_kl[elu+1]" -> "median row KL to softmax, elu+1"). An unknown key is a
    KeyError, like ``t``: a raw key in the table is a bug."""
    if key in NUMBER_LABELS:
        entry = NUMBER_LABELS[key]
        return entry.get(lang) or entry["en"]
    for pattern, entry in _NUMBER_FAMILIES:
        match = re.fullmatch(pattern, key)
        if match:
            parts = match.groupdict()
            if "kind" in parts:          # a decay kind: its legend name
                parts["name"] = t(f"legend.{parts.pop('kind')}", lang)
            return (entry.get(lang) or entry["en"]).format(**parts)
    raise KeyError(f"no label for the number {key!r}")


def keys() -> list[str]:
    return list(TEXT)


def notice(key: str, lang: str = "en", **values) -> str:
    """A notice in ``lang``; the same as ``t`` for keys under ``notice.``."""
    if not key.startswith("notice."):
        raise KeyError(f"{key!r} is not a notice")
    return t(key, lang, **values)


REVERSE_KERNEL_ROWS = ("goal", "works", "phi", "cost", "price")


def reverse_kernel_table(lang: str = "en") -> list[list[str]]:
    """Chapter 3's two-column comparison (SVM's kernel trick against linear attention's
    reverse use of it) as rows of text: a header row, then one row per aspect."""
    header = [t("rk.header.aspect", lang), t("rk.header.svm", lang), t("rk.header.linear", lang)]
    return [header] + [[t(f"rk.row.{row}.{col}", lang) for col in ("aspect", "svm", "linear")]
                       for row in REVERSE_KERNEL_ROWS]
