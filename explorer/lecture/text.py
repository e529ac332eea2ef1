"""Every sentence the lecture shows, in English ("en") and Simplified Chinese ("zh").

The Chinese is written for this app, not translated word for word and not taken from the
article. Keys:

    ch{i}.title / ch{i}.claim            the chapter's heading and its claim (2-4 sentences)
    ch{i}.b{k}.title                     the title of build k of chapter i (one figure each)
    notes.ch{i}                          the speaker's talking points, one per line (``notes``)
    axis.*                               axis labels, shared between figures
    ctl.*, choice.*                      control labels and the readable names of choices
    notice.*                             notices, formatted with the values they name
    legend.*, num.*, note.*, rk.*        legends, printed numbers, notes, the reverse-kernel table
    map.*                                map names as the audience reads them (``map_name``)

``t(key, lang, **values)`` returns the text in ``lang`` (English when the language is not
offered), formatted with ``values``. A missing key is a KeyError: a blank title is a bug.
"""

from __future__ import annotations

import re

LANGS = ("en", "zh")

# The sentence every chapter reads unless the speaker gives another: the data panel's first
# example (assets/examples.txt), so that the panel, the lecture and the tool tabs behind
# "Go deeper" all show the same text. Its pronoun ("it" -> "the animal") is what attention
# has to resolve.
DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."
# The same sentence for a Chinese audience, read by the chapters whose model reads Chinese
# (the packaged causal SmolLM2; the embedded MiniLM turns Chinese into [UNK]).
DEFAULT_TEXT_ZH = "那只动物没有过马路，因为它太累了。"


def default_text(lang: str = "en") -> str:
    """The lecture's own sentence in ``lang`` (English unless "zh")."""
    return DEFAULT_TEXT_ZH if lang == "zh" else DEFAULT_TEXT

TEXT: dict[str, dict[str, str]] = {
    "lecture.title": {"en": "Linear attention through kernels: a lecture", "zh": "从核方法看线性注意力"},
    "lecture.notes_head": {"en": "Speaker notes", "zh": "讲者备注"},

    # ---------------------------------------------------------------- chapter titles and claims
    "ch0.title": {"en": "0 · The bottleneck", "zh": "0 · 瓶颈在哪里"},
    "ch0.claim": {
        "en": "Softmax attention compares every token with every other token: N tokens make N² pairs, and their "
              "weights fill an N × N table. From 512 to 100K tokens that table grows about 38,000-fold, to 40 GB "
              "per head in float32. The rest of this lecture is about never building it.",
        "zh": "softmax 注意力让每个词元都和所有词元逐一比较：N 个词元构成 N² 个词元对，它们的权重要填满一张 "
              "N × N 的表。序列从 512 个词元增加到 10 万个，这张表大约会膨胀到原来的 3.8 万倍，单个头用 float32 "
              "存储就要 40 GB。这一讲接下来的内容，都是为了根本不去构造这张表。"},
    "ch1.title": {"en": "1 · Attention is kernel regression", "zh": "1 · 注意力就是核回归"},
    "ch1.claim": {
        "en": "Nadaraya and Watson (1964) estimated the value at x as an average of the observed yⱼ, each weighted "
              "by a kernel K(x, xⱼ) that says how close xⱼ lies. Put a query in place of x, the keys in place of "
              "the xⱼ, the value rows in place of the yⱼ and exp(q·k/√d) as the kernel: that is softmax attention. "
              "On a real head, the kernel regression computed here matches the model's own output to float32 "
              "rounding.",
        "zh": "Nadaraya 和 Watson 在 1964 年提出：要估计 x 处的值，就对观测值 yⱼ 做加权平均，权重由核函数 "
              "K(x, xⱼ) 给出，xⱼ 离 x 越近，权重越大。把 x 换成查询向量，把 xⱼ 换成键，把 yⱼ 换成值向量，"
              "再取 exp(q·k/√d) 作核函数，得到的就是 softmax 注意力。在真实的注意力头上，这里按核回归算出的"
              "输出与模型自己的输出只差 float32 的舍入误差。"},
    "ch2.title": {"en": "2 · Associativity", "zh": "2 · 结合律"},
    "ch2.claim": {
        "en": "If the kernel splits as φ(q)·φ(k), the product (φ(Q)φ(K)ᵀ)V can be computed as φ(Q)(φ(K)ᵀV). "
              "The result is the same, but the matrix in the middle shrinks from N × N to m × d, and the cost "
              "grows linearly in N instead of quadratically. Softmax cannot be regrouped like this: exp(q·k) is "
              "not the inner product of two finite-dimensional feature vectors.",
        "zh": "如果核函数能拆成 φ(q)·φ(k)，乘积 (φ(Q)φ(K)ᵀ)V 就可以改成按 φ(Q)(φ(K)ᵀV) 的顺序计算。"
              "结果完全相同，中间那个矩阵却从 N × N 缩小到 m × d，计算量也从随 N 平方增长变成随 N 线性增长。"
              "softmax 没法这样重新组合，因为 exp(q·k) 写不成两个有限维特征向量的内积。"},
    "ch3.title": {"en": "3 · Choosing the kernel", "zh": "3 · 核函数怎么选"},
    "ch3.claim": {
        "en": "exp(s) has no finite feature map, so every linear method picks a finite φ whose kernel only "
              "resembles it: a truncated Taylor series, elu+1, or random features. Random features are right on "
              "average, but their variance grows like exp(‖q′+k′‖²): on a real head, where the vectors are long, "
              "the m they need is far beyond what anyone uses.",
        "zh": "exp(s) 不存在有限维的特征映射，所以每种线性方法都只能挑一个有限维的 φ，让它的核尽量接近 exp："
              "截断的泰勒级数、elu+1，或者随机特征。随机特征的期望是对的，但方差按 exp(‖q′+k′‖²) 增长；"
              "真实注意力头上的向量很长，需要的 m 远远超出任何人实际会用的规模。"},
    "ch4.title": {"en": "4 · Linear attention is an RNN", "zh": "4 · 线性注意力是一个 RNN"},
    "ch4.claim": {
        "en": "With a causal mask, the sums up to token t become a running state: S_t = S_(t−1) + φ(k_t)v_tᵀ, and "
              "beside it z_t = z_(t−1) + φ(k_t), the sum of the key features that normalises the output "
              "o_t = φ(q_t)S_t / φ(q_t)z_t. The state has a fixed size, unlike a KV cache that grows with every "
              "token. But it only ever adds: old keys are never removed, so any one of them is harder to recall "
              "as the sequence grows.",
        "zh": "加上因果掩码后，到第 t 个词元为止的求和就成了一个不断累加的状态：S_t = S_(t−1) + φ(k_t)v_tᵀ；"
              "与它并行的还有 z_t = z_(t−1) + φ(k_t)，即键特征之和，用来给输出归一化："
              "o_t = φ(q_t)S_t / φ(q_t)z_t。状态的大小是固定的，而 KV 缓存每多一个词元就长一截。"
              "可是状态只加不减，旧的键永远留在里面，序列越长，要取回其中任何一个就越难。"},
    "ch5.title": {"en": "5 · Closing the gap", "zh": "5 · 缩小差距"},
    "ch5.claim": {
        "en": "Three repairs came after 2020. Let old content go: by decay (RetNet, a fixed γ per head), by gates "
              "(GLA, set by each token; HGRN2 floors them, higher with depth) or by overwriting (DeltaNet's delta "
              "rule). Learned maps (Hedgehog) train φ to match softmax's rows. Hybrids keep a few softmax layers and "
              "make the rest linear.",
        "zh": "2020 年以后出现了三类补救办法。一是让旧内容退场：靠衰减（RetNet，每个头一个固定的 γ）、"
              "靠门控（GLA，随词元而变；HGRN2 的门控有随层数升高的下限），或靠覆盖（DeltaNet 的增量规则）。"
              "二是可学习的映射（Hedgehog），训练 φ 去贴近 softmax 的每一行。三是混合模型，保留几层 softmax，其余换成线性注意力。"},
    "ch6.title": {"en": "6 · The trade-off", "zh": "6 · 速度与精度的权衡"},
    "ch6.claim": {
        "en": "Every map buys speed with accuracy. Plotted as cost against the distance to softmax on this text, "
              "the maps worth using lie on the Pareto frontier, where no other map is both cheaper and closer. "
              "The 2020–2025 roadmap is measured here too: each point says which map it is and what it was "
              "compared with, so the progress it shows is this text's, not a quoted number.",
        "zh": "每种映射都是拿精度换速度。以代价为横轴、以与 softmax 在这段文本上的差距为纵轴，值得用的映射都落在"
              "帕累托前沿上：没有别的映射比它更便宜、同时又更接近 softmax。2020–2025 年的路线图也是在这里实测的："
              "每个点都注明用的是哪种映射、和什么比较，所以图上的进步是这段文本上量出来的，而不是引用的数字。"},

    # ---------------------------------------------------------------- speaker notes (one point per line)
    "notes.ch0": {
        "en": "Start with the count, not the formula: every token looks at every token, N² pairs.\n"
              "512 tokens is 262,144 pairs; 100K tokens is ten billion. Show the bars on a linear axis: "
              "the short one is still there, it is just 38,000 times smaller.\n"
              "Memory: the N × N weights of one head at 100K tokens in float32 are 40 GB, more than most GPUs hold.\n"
              "The question for the hour: can we get the same output without ever writing this table down?",
        "zh": "先讲数数，不讲公式：每个词元都要看所有词元，一共 N² 对。\n"
              "512 个词元是 262,144 对；10 万个词元就是一百亿对。柱子用的是线性坐标：矮的那根并没有消失，"
              "只是比高的小了 3.8 万倍。\n"
              "再看内存：10 万个词元时，一个头的 N × N 权重用 float32 存要 40 GB，比大多数 GPU 的显存还大。\n"
              "这一讲要回答的问题是：能不能不写下这张表，也得到同样的输出？"},
    "notes.ch1": {
        "en": "Kernel regression predates deep learning by fifty years: a weighted average with weights from a kernel.\n"
              "Narrow the bandwidth h (try this) and the estimate follows the nearest points only; widen it and "
              "it flattens out.\n"
              "Now the same formula on a real head: the query's weights over the keys are a softmax of q·k/√d.\n"
              "The difference to the model's own output is at float32 rounding: attention is this regression, "
              "not like it.",
        "zh": "核回归比深度学习早了五十年：它就是一个加权平均，权重由核函数给出。\n"
              "把带宽 h 调小（点“试一试”），估计就只跟着最近的几个点走；调大，曲线就变得平坦。\n"
              "再把同一个公式放到真实的注意力头上：查询对各个键的权重，正是 q·k/√d 的 softmax。\n"
              "它和模型自身输出的差距只有 float32 的舍入误差：注意力不是“像”核回归，它就是核回归。"},
    "notes.ch2": {
        "en": "Matrix products are associative: the brackets choose the order, not the answer.\n"
              "Left order: φ(Q)φ(K)ᵀ is N × N. Right order: φ(K)ᵀV is m × d, whatever N is.\n"
              "At N = 100K and d = 128 the FLOP model gives about 780 times less work; the bars show the ratio "
              "at the N chosen here, measured live.\n"
              "The catch: softmax's exp does not split into φ(q)·φ(k). That is the next chapter.",
        "zh": "矩阵乘法满足结合律：括号决定的是计算顺序，不是结果。\n"
              "左边的顺序先算 φ(Q)φ(K)ᵀ，是 N × N 的；右边的顺序先算 φ(K)ᵀV，不论 N 多大都只有 m × d。\n"
              "N = 10 万、d = 128 时，按运算量模型要少算大约 780 倍；柱状图给出的是这里所选 N 下当场实测的比值。\n"
              "问题在于：softmax 的 exp 拆不成 φ(q)·φ(k)。这是下一章的内容。"},
    "notes.ch3": {
        "en": "The SVM's kernel trick avoids φ; linear attention needs φ explicitly, and small.\n"
              "Taylor order 1 goes negative where s < −1, and on a real head many pairs lie there: the note "
              "gives the share.\n"
              "Random features are unbiased: on well-conditioned data the error falls like 1/√m.\n"
              "On a real head the vectors are long, the variance explodes as exp(‖q′+k′‖²), and the m required "
              "is astronomical.",
        "zh": "SVM 的核技巧是为了不碰 φ；线性注意力却必须把 φ 明确算出来，而且维度要小。\n"
              "一阶泰勒展开在 s < −1 时变成负数，而真实注意力头上有不少词元对正落在这里，图下的说明给出了比例。\n"
              "随机特征是无偏的：在条件良好的数据上，误差按 1/√m 下降。\n"
              "可真实注意力头上的向量很长，方差按 exp(‖q′+k′‖²) 爆炸，需要的 m 是个天文数字。"},
    "notes.ch4": {
        "en": "Causal linear attention, written one token at a time, is an RNN with a matrix-valued state.\n"
              "Each step adds one outer product φ(k_t)v_tᵀ to S, and φ(k_t) to z, the normaliser.\n"
              "The recurrent loop and the parallel form give the same outputs, to rounding.\n"
              "The state never grows, so inference memory is constant, but it never forgets either: "
              "recall of one old key sinks as more keys are written.",
        "zh": "因果线性注意力一次处理一个词元，写出来就是一个状态为矩阵的 RNN。\n"
              "每一步往 S 里加一个外积 φ(k_t)v_tᵀ，往归一化向量 z 里加 φ(k_t)。\n"
              "循环形式和并行形式算出的输出相同，只差舍入误差。\n"
              "状态不会变大，所以推理时内存固定；但它也从不遗忘：写进去的键越多，想取回某个旧键就越难。"},
    "notes.ch5": {
        "en": "Decay: multiply the state by γ < 1 at every step. Recent keys come back clearly, old ones fade "
              "on purpose. GLA makes that factor a gate computed from the token, one per feature.\n"
              "Overwriting: the delta rule reads what the state holds under k_t, erases it and writes v_t in its place. "
              "The latest key comes back exactly, and early keys survive longer than in the additive state.\n"
              "HGRN2: each layer's forget gate has a floor that rises with depth, so low layers forget within a few "
              "tokens and high layers keep a long memory.\n"
              "Hedgehog trains φ to copy softmax's rows: the trained map shown here is well below elu+1 in row KL.\n"
              "Hybrids: a handful of softmax layers recover most of the original model.",
        "zh": "衰减：每一步都把状态乘上一个小于 1 的 γ。近期的键能清楚地取回，旧的键被有意地淡化。"
              "GLA 把这个系数换成由词元算出的门控，每个特征一个。\n"
              "覆盖：DeltaNet 的增量规则先读出状态在 k_t 下存着什么，擦掉它，再把 v_t 写进去。"
              "最新的键能原样取回，早期的键也比只会累加的状态保留得更久。\n"
              "HGRN2：每一层的遗忘门都有一个下限，层越深下限越高。于是浅层几个词元就忘，深层能记得很久。\n"
              "Hedgehog 训练 φ 去模仿 softmax 的每一行：这里显示的是训练好的映射，它的逐行 KL 远低于 elu+1。\n"
              "混合模型：保留少数几层 softmax，就能找回原模型的大部分表现。"},
    "notes.ch6": {
        "en": "Each point is one map on this text: cost per token against the median row KL to softmax.\n"
              "The frontier is where to choose from; everything above it is beaten on both counts.\n"
              "The roadmap keeps two kinds apart: full attention against softmax, and causal attention against "
              "causal softmax. Compare points of one kind only.\n"
              "Every step after 2020 sits below its 2020 baseline here, measured, not quoted; LUNA, a learned "
              "kernel, sits beside Hedgehog.\n"
              "The state updates get their own panel and their own measure, recall: the delta rule returns the "
              "latest key exactly and keeps early keys longer; decay and gates trade early keys for recent ones.",
        "zh": "每个点是一种映射在这段文本上的表现：横轴是每个词元的代价，纵轴是与 softmax 的逐行 KL 中位数。\n"
              "要选映射就在前沿上选；前沿上方的点在代价和精度上都被别的映射比下去了。\n"
              "路线图把两类测量分开：完整注意力对比 softmax，因果注意力对比因果 softmax。只在同一类里比较。\n"
              "在这里，2020 年之后的每一步都低于同类的 2020 年基准，这是实测的，不是引用的；"
              "可学习核 LUNA 与 Hedgehog 放在一起。\n"
              "状态更新方式单独成一张图，用另一种度量：取回。增量规则（DeltaNet）能把最新的键原样取回，早期的键也留得更久；"
              "衰减和门控则是用早期的键换来近期的键。"},

    # ---------------------------------------------------------------- build titles (one figure each)
    "ch0.b0.title": {"en": "Pairs to compare: N² grows 38,000-fold from 512 to 100K tokens",
                     "zh": "要比较的词元对：从 512 到 10 万个词元，N² 增长约 3.8 万倍"},
    "ch0.b1.title": {"en": "Memory of the N × N weights of one head", "zh": "单个头的 N × N 权重占用的内存"},
    "ch0.b2.title": {"en": "Work per head at N = {n}: softmax order against the linear order",
                     "zh": "N = {n} 时每个头的运算量：softmax 顺序与线性顺序"},
    "ch1.b0.title": {"en": "Kernel regression in 1-D (h = {h}, x = {x})", "zh": "一维核回归（h = {h}，x = {x}）"},
    "ch1.b1.title": {"en": "Query “{token}”: its kernel weights on the keys", "zh": "查询“{token}”：它在各个键上的核权重"},
    "ch1.b2.title": {"en": "Query “{token}”: kernel regression equals the model's output",
                     "zh": "查询“{token}”：核回归的结果与模型输出相同"},
    "ch2.b0.title": {"en": "Two orders, one result (N = {n}, d = {d}, m = {m})",
                     "zh": "两种乘法顺序，同一个结果（N = {n}，d = {d}，m = {m}）"},
    "ch2.b1.title": {"en": "Cost of each order at N = {n}", "zh": "N = {n} 时两种顺序的代价"},
    "ch3.b0.title": {"en": "The kernel trick, used in reverse", "zh": "反过来用的核技巧"},
    "ch3.b1.title": {"en": "exp(s) and its Taylor truncations, over this head's logits",
                     "zh": "exp(s) 与它的泰勒截断，以及本注意力头的 logit 分布"},
    "ch3.b2.title": {"en": "Kernel values of the Taylor truncations against exp(q·k/√d)",
                     "zh": "泰勒截断的核函数值与 exp(q·k/√d) 对照"},
    "ch3.b3.title": {"en": "Kernel values of elu+1 and random features against exp(q·k/√d)",
                     "zh": "elu+1 与随机特征的核函数值与 exp(q·k/√d) 对照"},
    "ch3.b4.title": {"en": "Random features: error as m grows", "zh": "随机特征：误差随 m 增大而下降"},
    "ch3.b5.title": {"en": "Why the real head converges slowly: |q′| and |k′|",
                     "zh": "真实注意力头为什么收敛得慢：|q′| 与 |k′|"},
    "ch4.b0.title": {"en": "Step t = {t} (“{token}”): S_t = S_(t−1) + φ(k_t)v_tᵀ",
                     "zh": "第 t = {t} 步（“{token}”）：S_t = S_(t−1) + φ(k_t)v_tᵀ"},
    "ch4.b1.title": {"en": "Memory: a fixed state against a growing KV cache", "zh": "内存：固定大小的状态与不断增长的 KV 缓存"},
    "ch4.b2.title": {"en": "It never forgets, so it cannot recall", "zh": "从不遗忘，所以难以取回"},
    "ch5.b0.title": {"en": "Forgetting on purpose: recall of early and recent keys",
                     "zh": "有意淡化旧内容：早期键与近期键的取回"},
    "ch5.b1.title": {"en": "Forgetting by overwriting: recall after {lag} other keys",
                     "zh": "靠覆盖来遗忘：再写入 {lag} 个键之后的取回"},
    "ch5.b2.title": {"en": "HGRN2: the forget gate's floor rises with depth",
                     "zh": "HGRN2：遗忘门的下限随层数升高"},
    "ch5.b3.title": {"en": "A trained map against fixed maps: row KL to softmax",
                     "zh": "训练过的映射与固定映射：与 softmax 的逐行 KL"},
    "ch5.b3.title_untrained": {"en": "An untrained learned map against fixed maps: row KL to softmax",
                               "zh": "未训练的可学习映射与固定映射：与 softmax 的逐行 KL"},
    "ch5.b3.title_causal": {"en": "Trained map vs fixed maps: row KL to causal softmax",
                            "zh": "训练过的映射与固定映射：与因果 softmax 的逐行 KL"},
    "ch5.b3.title_untrained_causal": {"en": "Untrained learned map vs fixed maps: KL to causal softmax",
                                      "zh": "未训练的可学习映射与固定映射：与因果 softmax 的逐行 KL"},
    "ch5.b4.title": {"en": "Hybrid model: keep k softmax layers, make the rest linear",
                     "zh": "混合模型：保留 k 层 softmax，其余各层换成线性注意力"},
    "ch6.b0.title": {"en": "Cost against quality, layer {layer}: the Pareto frontier",
                     "zh": "第 {layer} 层的代价与质量：帕累托前沿"},
    "ch6.b1.title": {"en": "Roadmap 2020 → 2025 on layer {layer}, head {head}",
                     "zh": "2020 → 2025 路线图：第 {layer} 层第 {head} 个头"},

    "ch6.b2.title": {"en": "Roadmap of the state updates: recall after {lag} other keys",
                     "zh": "状态更新方式的路线图：再写入 {lag} 个键之后的取回"},

    # ---------------------------------------------------------------- figure notes
    "ch0.b0.note": {"en": "{a}: {pa} pairs · {b}: {pb} pairs · ×{g}", "zh": "{a}：{pa} 对 · {b}：{pb} 对 · ×{g}"},
    "ch0.b1.note": {"en": "N = {n}: {f32} in float32, {f16} in float16, for one head of one layer",
                    "zh": "N = {n}：float32 需 {f32}，float16 需 {f16}（一层中的一个头）"},
    "ch0.b2.note": {"en": "d = {d}, m = d: the softmax order costs ×{ratio} the linear order's FLOPs",
                    "zh": "d = {d}，m = d：softmax 顺序的浮点运算量是线性顺序的 {ratio} 倍"},
    "ch1.b0.note": {"en": "f̂(x) = {fx}: the weights at x are drawn under the points",
                    "zh": "f̂(x) = {fx}：下方是 x 处各观测点的权重"},
    "ch1.b1.rest": {"en": "the other {n} keys: weight {w} in all", "zh": "其余 {n} 个键的权重合计 {w}"},
    "ch1.b2.note": {"en": "max |difference| to the {ref}: {diff} (float32 rounding is about 1e-7)",
                    "zh": "与{ref}的最大绝对差：{diff}（float32 的舍入误差约为 1e-7）"},
    "ch2.b0.note": {"en": "FLOPs {lf} against {rf} · N × N: {nn}, m × d: {md} · outputs differ by {diff} "
                          "(relative {rel})",
                    "zh": "运算量 {lf} 对 {rf} · N × N：{nn}，m × d：{md} · 输出相差 {diff}（相对差 {rel}）"},
    "ch2.b1.note": {
        "en": "FLOPs ×{flops} · time ×{time} at N = {timed_n} (FLOP model there ×{timed_flops}; matmul "
              "{gflops} GFLOP/s now) · N = 100K, d = 128: ×{article} (N/d = {leading})",
        "zh": "运算量 ×{flops} · 实测耗时 ×{time}（N = {timed_n}；该处按运算量模型为 ×{timed_flops}；"
              "当前矩阵乘法 {gflops} GFLOP/s）· N = 10 万、d = 128 时：×{article}（N/d = {leading}）"},
    "ch3.b1.note": {"en": "grey bars: how many of the N² = {pairs} (query, key) pairs of {n} tokens have each logit "
                          "(from {lo} to {hi}); 1 + s < 0 for {neg} % of them",
                    "zh": "灰色柱子：{n} 个词元的 N² = {pairs} 个（查询，键）对中，logit 落在各处的个数"
                          "（从 {lo} 到 {hi}）；其中 {neg} % 满足 1 + s < 0"},
    "ch3.b5.note": {"en": "m for 10 % error: {real} ({real_label}) · {well} ({well_label})",
                    "zh": "误差 10 % 所需的 m：{real}（{real_label}）· {well}（{well_label}）"},
    "ch4.b0.note": {"en": "recurrent o_t against the parallel form: max |difference| {diff} (relative {rel}) · "
                          "z_t = z_(t−1) + φ(k_t), φ(q_t)·z_t = {den}",
                    "zh": "循环形式的 o_t 与并行形式相比：最大绝对差 {diff}（相对差 {rel}）· "
                          "z_t = z_(t−1) + φ(k_t)，φ(q_t)·z_t = {den}"},
    "ch4.b1.note": {"en": "m = {m}: state {state}; equal at t ≈ {t}", "zh": "m = {m}：状态 {state}；t ≈ {t} 时两者一样大"},
    "ch4.b2.note": {"en": "a key written first, then others: cosine of what comes back is {first} after 1 other key, "
                          "{last} after {lag}",
                    "zh": "先写入一个键，再写入其他键：取回值的余弦在写入 1 个其他键后为 {first}，写入 {lag} 个后为 {last}"},
    "ch5.b0.note": {"en": "RetNet γ = {gamma}, gate strength {strength} · recent minus early at lag 256: "
                          "no decay {none}, RetNet {retnet}, GLA {gla}",
                    "zh": "RetNet γ = {gamma}，门控强度 {strength} · 间隔 256 时，近期键减早期键的取回余弦："
                          "无衰减 {none}，RetNet {retnet}，GLA {gla}"},
    "ch5.b1.note": {"en": "delta rule: S ← a(I − β k kᵀ)S + β k vᵀ, β = 1 · at lag 256 (early / recent): "
                          "DeltaNet {de} / {dr}, no decay {ne} / {nr}",
                    "zh": "增量规则：S ← a(I − β k kᵀ)S + β k vᵀ，β = 1 · 间隔 256 时（早期 / 近期）："
                          "DeltaNet {de} / {dr}，无衰减 {ne} / {nr}"},
    "ch5.b2.note": {"en": "lb = l / {layers} (equal learned shares) · on the bars: a gate f ≥ lb keeps a token "
                          "≥ 1/(1 − lb) steps",
                    "zh": "lb = l / {layers}（各层份额相同）· 柱上的数字：门控 f ≥ lb 时，一个词元至少保留 1/(1 − lb) 步"},
    "ch5.b3.note": {"en": "mean row KL on layer {layer}, head {head}: {values}",
                    "zh": "第 {layer} 层第 {head} 个头的平均逐行 KL：{values}"},
    "ch5.b4.note": {"en": "cosine of the sentence embedding to the original model's · linear layers use {map}; {mode}",
                    "zh": "句向量与原模型句向量的余弦相似度 · 线性层使用 {map}；{mode}"},
    "ch5.b4.greedy": {"en": "labels: the softmax layer each step adds back", "zh": "标注：每一步加回的 softmax 层"},
    "ch5.b4.last": {"en": "the last k layers stay softmax", "zh": "最后 k 层保留 softmax"},
    "ch6.b1.note": {"en": "measured on this text: median row KL to softmax (full attention) or to causal softmax "
                          "(causal); compare bars of one panel only, shorter is closer",
                    "zh": "在这段文本上实测：与 softmax（完整注意力）或因果 softmax（因果）的逐行 KL 中位数；"
                          "只比较同一面板内的柱子，越短越接近"},
    "ch6.b2.note": {"en": "a different measure from the KL panels: cosine of the value read back with its key, random keys "
                          "and values (d = {d}), the early key followed by {lag} others, the recent one written after "
                          "{lag} others; longer is better",
                    "zh": "与 KL 面板是不同的度量：用键取回的值与存入值的余弦，键和值随机生成（d = {d}）；"
                          "早期的键之后又写入 {lag} 个，近期的键之前已写入 {lag} 个；越长越好"},
    "word.linear": {"en": "linear", "zh": "线性"},

    # ---------------------------------------------------------------- axes
    "axis.n": {"en": "sequence length N (tokens)", "zh": "序列长度 N（词元数）"},
    "axis.pairs": {"en": "token pairs N²", "zh": "词元对的个数 N²"},
    "axis.gb": {"en": "memory (GB)", "zh": "内存（GB）"},
    "axis.bytes": {"en": "bytes", "zh": "字节"},
    "axis.flops": {"en": "FLOPs per head", "zh": "每个头的浮点运算次数"},
    "axis.x": {"en": "x", "zh": "x"},
    "axis.y": {"en": "y", "zh": "y"},
    "axis.weight": {"en": "weight", "zh": "权重"},
    "axis.key": {"en": "key", "zh": "键"},
    "axis.value_dim": {"en": "value dimension", "zh": "值向量的维度"},
    "axis.value": {"en": "output value", "zh": "输出值"},
    "axis.s": {"en": "logit s = q·k/√d", "zh": "logit s = q·k/√d"},
    "axis.kernel": {"en": "kernel value", "zh": "核函数值"},
    "axis.pair_count": {"en": "(query, key) pairs", "zh": "（查询，键）对的个数"},
    "axis.token_count": {"en": "tokens", "zh": "词元个数"},
    "axis.exact": {"en": "exp(q·k/√d)", "zh": "exp(q·k/√d)"},
    "axis.approx": {"en": "φ(q)·φ(k)", "zh": "φ(q)·φ(k)"},
    "axis.m": {"en": "features m", "zh": "特征数 m"},
    "axis.map_error": {"en": "map error ‖Â − A‖/‖A‖", "zh": "注意力图误差 ‖Â − A‖/‖A‖"},
    "axis.norm": {"en": "|x′| = |x| / d^¼", "zh": "|x′| = |x| / d^¼"},
    "axis.tokens_seen": {"en": "tokens seen t", "zh": "已读词元数 t"},
    "axis.lag": {"en": "other keys written (lag)", "zh": "写入的其他键数（间隔）"},
    "axis.cosine": {"en": "cosine(recalled, stored)", "zh": "余弦（取回值，存入值）"},
    "axis.kl": {"en": "row KL(softmax ‖ map), nats", "zh": "逐行 KL(softmax ‖ 映射)，奈特"},
    "axis.kl_causal": {"en": "row KL(causal ‖ map), nats", "zh": "逐行 KL(因果 ‖ 映射)，奈特"},
    "axis.median_kl": {"en": "median row KL (nats)", "zh": "逐行 KL 中位数（奈特）"},
    "axis.flops_token": {"en": "linear-path FLOPs per token", "zh": "线性路径每个词元的浮点运算次数"},
    "axis.k_softmax": {"en": "softmax layers kept k", "zh": "保留的 softmax 层数 k"},
    "axis.embedding_cos": {"en": "cosine to the original", "zh": "与原模型的余弦相似度"},
    "axis.layer": {"en": "layer l (depth)", "zh": "第 l 层（深度）"},
    "axis.update": {"en": "state update", "zh": "状态更新方式"},
    "axis.year": {"en": "year", "zh": "年份"},
    "axis.feature": {"en": "feature (row of S)", "zh": "特征（S 的行）"},
    "axis.seconds": {"en": "seconds (measured now)", "zh": "秒（当场实测）"},

    # ---------------------------------------------------------------- legends and numbers
    "legend.float32": {"en": "float32", "zh": "float32"},
    "legend.float16": {"en": "float16", "zh": "float16"},
    "legend.softmax_order": {"en": "softmax order (N²)", "zh": "softmax 顺序（N²）"},
    "legend.linear_order": {"en": "linear order", "zh": "线性顺序"},
    "legend.points": {"en": "noisy observations", "zh": "带噪声的观测点"},
    "legend.truth": {"en": "true function", "zh": "真实函数"},
    "legend.estimate": {"en": "Nadaraya–Watson estimate", "zh": "Nadaraya–Watson 估计"},
    "legend.weights": {"en": "weights at x", "zh": "x 处的权重"},
    "legend.query": {"en": "query x", "zh": "查询点 x"},
    "legend.nw_output": {"en": "Σ wⱼ vⱼ (computed here)", "zh": "Σ wⱼ vⱼ（这里算出）"},
    "legend.model_output": {"en": "the model's attention output", "zh": "模型自己的注意力输出"},
    "legend.engine_output": {"en": "softmax(QKᵀ/√d)V by the engine (no model here)",
                             "zh": "引擎算出的 softmax(QKᵀ/√d)V（这里没有模型）"},
    "ref.model": {"en": "model's output", "zh": "模型输出"},
    "ref.engine": {"en": "engine's softmax", "zh": "引擎的 softmax"},
    "legend.left": {"en": "(φ(Q)φ(K)ᵀ)V", "zh": "(φ(Q)φ(K)ᵀ)V"},
    "legend.right": {"en": "φ(Q)(φ(K)ᵀV)", "zh": "φ(Q)(φ(K)ᵀV)"},
    "legend.logits": {"en": "this head's logits", "zh": "本注意力头的 logit"},
    "legend.exp": {"en": "exp(s)", "zh": "exp(s)"},
    "legend.order": {"en": "Taylor order {k}", "zh": "{k} 阶泰勒展开"},
    "legend.taylor1_negative": {"en": "1 + s < 0: order 1 is negative", "zh": "1 + s < 0：一阶展开为负"},
    "legend.identity": {"en": "dotted: where φ(q)·φ(k) equals exp exactly", "zh": "虚线：φ(q)·φ(k) 恰好等于 exp 的位置"},
    "legend.well": {"en": "well-conditioned sample", "zh": "条件良好的样本"},
    "legend.real": {"en": "this head", "zh": "本注意力头"},
    "legend.iid": {"en": "IID", "zh": "独立同分布"},
    "legend.orthogonal": {"en": "orthogonal", "zh": "正交"},
    "legend.q_norm": {"en": "|q′|", "zh": "|q′|"},
    "legend.k_norm": {"en": "|k′|", "zh": "|k′|"},
    "legend.kv_cache": {"en": "KV cache (softmax)", "zh": "KV 缓存（softmax）"},
    "legend.state": {"en": "state S and z (linear)", "zh": "状态 S 与 z（线性）"},
    "legend.early": {"en": "early key (written first)", "zh": "早期的键（最先写入）"},
    "legend.recent": {"en": "recent key (written last)", "zh": "近期的键（最后写入）"},
    "legend.none": {"en": "no decay", "zh": "无衰减"},
    "legend.retnet": {"en": "RetNet γ", "zh": "RetNet γ"},
    "legend.gla": {"en": "GLA gates", "zh": "GLA 门控"},
    "legend.frontier": {"en": "Pareto frontier", "zh": "帕累托前沿"},
    "legend.maps": {"en": "maps", "zh": "各映射"},
    "legend.update": {"en": "this step adds φ(k_t)v_tᵀ", "zh": "这一步加上 φ(k_t)v_tᵀ"},
    "legend.state_t": {"en": "the state S_t after it", "zh": "加完之后的状态 S_t"},
    "legend.deltanet": {"en": "DeltaNet", "zh": "DeltaNet"},
    "legend.gated_deltanet": {"en": "Gated DeltaNet", "zh": "Gated DeltaNet"},
    "legend.hgrn2": {"en": "HGRN2", "zh": "HGRN2"},
    "legend.lower_bound": {"en": "floor lb of the forget gate", "zh": "遗忘门的下限 lb"},
    "legend.recall_after": {"en": "recall after {lag} other keys", "zh": "再写入 {lag} 个键之后的取回"},
    "legend.recall_early": {"en": "early key", "zh": "早期的键"},
    "legend.recall_recent": {"en": "recent key", "zh": "近期的键"},
    "legend.noncausal": {"en": "full attention, against softmax", "zh": "完整注意力，对比 softmax"},
    "legend.causal": {"en": "causal, against causal softmax", "zh": "因果注意力，对比因果 softmax"},
    "num.max_diff": {"en": "max |difference|", "zh": "最大绝对差"},
    "note.kl_undefined": {"en": "{map}: median KL undefined", "zh": "{map}：KL 中位数无定义"},
    "note.kl_zero": {"en": "{map}: median KL {kl}, not drawn on the log axis",
                     "zh": "{map}：KL 中位数为 {kl}，无法画在对数坐标上"},
    "note.kl_not_drawn": {"en": "{map}: {count} rows with KL ≤ 0 not drawn on the log axis",
                          "zh": "{map}：{count} 行 KL ≤ 0，无法画在对数坐标上"},

    # ---------------------------------------------------------------- roadmap points (what each measures)
    "road.2020": {"en": "2020 Linear Transformer: elu+1", "zh": "2020 线性 Transformer：elu+1"},
    "road.2021": {"en": "2021 Performer: FAVOR+, m = {m}", "zh": "2021 Performer：FAVOR+，m = {m}"},
    "road.2023": {"en": "2023 RetNet: elu+1, decay γ = {gamma}", "zh": "2023 RetNet：elu+1，衰减 γ = {gamma}"},
    "road.2024_gla": {"en": "2024 GLA: elu+1, gates fitted here", "zh": "2024 GLA：elu+1，门控在此拟合"},
    "road.2024_hedgehog": {"en": "2024 Hedgehog, trained", "zh": "2024 Hedgehog，训练过"},
    "road.2024_hedgehog_untrained": {"en": "2024 Hedgehog, untrained (W = I)", "zh": "2024 Hedgehog，未训练（W = I）"},
    "road.2025": {"en": "2025 hybrid: {w}-token window + Taylor-2", "zh": "2025 混合：{w} 词元窗口 + Taylor-2"},
    "road.2025_luna": {"en": "2025 LUNA, trained", "zh": "2025 LUNA，训练过"},
    "road.short.2025_luna": {"en": "2025 LUNA", "zh": "2025 LUNA"},
    "road.2020_state": {"en": "2020 linear attention: adds, no decay", "zh": "2020 线性注意力：只累加，无衰减"},
    "road.2023_state": {"en": "2023 RetNet: decay γ = {gamma}", "zh": "2023 RetNet：衰减 γ = {gamma}"},
    "road.2024_state_gla": {"en": "2024 GLA: gates", "zh": "2024 GLA：门控"},
    "road.2024_hgrn2": {"en": "2024 HGRN2: gates, lb = {lb}", "zh": "2024 HGRN2：门控，下限 lb = {lb}"},
    "road.2024_deltanet": {"en": "2024 DeltaNet: overwrites", "zh": "2024 DeltaNet：覆盖写入"},
    "road.2025_gated_deltanet": {"en": "2025 Gated DeltaNet: overwrites + gate",
                                 "zh": "2025 Gated DeltaNet：覆盖写入 + 门控"},
    "road.short.2020_state": {"en": "2020 no decay", "zh": "2020 无衰减"},
    "road.short.2023_state": {"en": "2023 RetNet", "zh": "2023 RetNet"},
    "road.short.2024_state_gla": {"en": "2024 GLA", "zh": "2024 GLA"},
    "road.short.2024_hgrn2": {"en": "2024 HGRN2", "zh": "2024 HGRN2"},
    "road.short.2024_deltanet": {"en": "2024 DeltaNet", "zh": "2024 DeltaNet"},
    "road.short.2025_gated_deltanet": {"en": "2025 Gated DeltaNet", "zh": "2025 Gated DeltaNet"},
    "road.2020_causal": {"en": "2020 baseline: elu+1, causal", "zh": "2020 基准：因果的 elu+1"},
    "road.short.2020": {"en": "2020 elu+1", "zh": "2020 elu+1"},
    "road.short.2020_causal": {"en": "2020 elu+1, causal", "zh": "2020 elu+1（因果）"},
    "road.short.2021": {"en": "2021 FAVOR+", "zh": "2021 FAVOR+"},
    "road.short.2023": {"en": "2023 RetNet decay", "zh": "2023 RetNet 衰减"},
    "road.short.2024_gla": {"en": "2024 GLA gates", "zh": "2024 GLA 门控"},
    "road.short.2024_hedgehog": {"en": "2024 Hedgehog", "zh": "2024 Hedgehog"},
    "road.short.2025": {"en": "2025 hybrid", "zh": "2025 混合模型"},

    # ---------------------------------------------------------------- map names (Chinese view)
    "map.identity (q·k)": {"en": "identity (q·k)", "zh": "恒等映射（q·k）"},
    "map.FAVOR+ (orthogonal)": {"en": "FAVOR+ (orthogonal)", "zh": "FAVOR+（正交）"},
    "map.FAVOR+ (IID)": {"en": "FAVOR+ (IID)", "zh": "FAVOR+（独立同分布）"},
    "map.trig RFF (orthogonal)": {"en": "trig RFF (orthogonal)", "zh": "三角随机特征（正交）"},
    "map.trig RFF (IID)": {"en": "trig RFF (IID)", "zh": "三角随机特征（独立同分布）"},
    "map.Hedgehog (trained)": {"en": "Hedgehog (trained)", "zh": "Hedgehog（训练过）"},
    "map.Hedgehog (W = I)": {"en": "Hedgehog (untrained, W = I)", "zh": "Hedgehog（未训练，W = I）"},
    "map.LUNA (trained)": {"en": "LUNA (trained)", "zh": "LUNA（训练过）"},
    "map.sliding window": {"en": "sliding window", "zh": "滑动窗口"},

    # ---------------------------------------------------------------- the reverse kernel trick (ch 3)
    "rk.header.aspect": {"en": "", "zh": ""},
    "rk.header.svm": {"en": "SVM: the kernel trick", "zh": "SVM：核技巧"},
    "rk.header.linear": {"en": "Linear attention: the reverse", "zh": "线性注意力：反过来用"},
    "rk.row.goal.aspect": {"en": "what it avoids", "zh": "想避免什么"},
    "rk.row.goal.svm": {"en": "ever writing φ(x) down: it may be infinite", "zh": "显式写出 φ(x)：它可能是无穷维的"},
    "rk.row.goal.linear": {"en": "ever forming the N × N kernel matrix", "zh": "构造 N × N 的核矩阵"},
    "rk.row.works.aspect": {"en": "what it works with", "zh": "实际算的是什么"},
    "rk.row.works.svm": {"en": "K(x, y) for every pair of points", "zh": "每一对样本之间的 K(x, y)"},
    "rk.row.works.linear": {"en": "φ(q), φ(k) for every token", "zh": "每个词元的 φ(q) 与 φ(k)"},
    "rk.row.phi.aspect": {"en": "the feature map", "zh": "特征映射"},
    "rk.row.phi.svm": {"en": "rich and high-dimensional, never computed", "zh": "丰富、高维，但从来不算出来"},
    "rk.row.phi.linear": {"en": "small on purpose (m features), computed explicitly", "zh": "有意选得很小（m 维），明确算出来"},
    "rk.row.cost.aspect": {"en": "cost grows with", "zh": "代价随什么增长"},
    "rk.row.cost.svm": {"en": "the number of points squared", "zh": "样本数的平方"},
    "rk.row.cost.linear": {"en": "N × m × d: linear in N", "zh": "N × m × d：随 N 线性增长"},
    "rk.row.price.aspect": {"en": "the price", "zh": "付出的代价"},
    "rk.row.price.svm": {"en": "none in accuracy: the kernel is exact", "zh": "精度上没有损失：核是精确的"},
    "rk.row.price.linear": {"en": "the kernel only approximates exp", "zh": "核只能近似 exp"},

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
    "choice.greedy": {"en": "best first (greedy)", "zh": "贪心：先保留最有用的层"},
    "choice.last": {"en": "the last k layers", "zh": "最后 k 层"},
    "choice.elu1": {"en": "elu+1", "zh": "elu+1"},
    "choice.favor_plus": {"en": "FAVOR+", "zh": "FAVOR+"},
    "choice.taylor2": {"en": "Taylor-2", "zh": "Taylor-2"},
    "choice.elu+1": {"en": "elu+1", "zh": "elu+1"},
    "choice.ReLU": {"en": "ReLU", "zh": "ReLU"},
    "choice.Taylor-2": {"en": "Taylor-2", "zh": "Taylor-2"},
    "choice.FAVOR+ (orthogonal)": {"en": "FAVOR+ (orthogonal)", "zh": "FAVOR+（正交）"},
    "choice.FAVOR+ (IID)": {"en": "FAVOR+ (IID)", "zh": "FAVOR+（独立同分布）"},

    # ---------------------------------------------------------------- notices
    "notice.unk": {
        "en": "{count} of {total} tokens are [UNK]: characters outside the embedded model's (MiniLM's) "
              "vocabulary, so they all share one embedding and the figures treat them as the same word.",
        "zh": "{total} 个词元中有 {count} 个是 [UNK]：这些字符不在内置模型（MiniLM）的词表里，"
              "它们共用同一个向量，图中会被当作同一个词。"},
    "notice.no_model_output": {
        "en": "This sample has no model behind it, so the output is compared with softmax(QKᵀ/√d)V computed by the "
              "engine instead of a model's own attention output.",
        "zh": "这份数据不是由模型产生的，所以输出是和引擎算出的 softmax(QKᵀ/√d)V 比较，而不是和模型自己的注意力输出比较。"},
    "notice.timed_cap": {
        "en": "N = {n} is above {cap}: the left order would hold {cells} weights, so times and the output "
              "difference are measured at N = {cap}; sizes and FLOPs are for N = {n}.",
        "zh": "N = {n} 超过了 {cap}：左边的顺序要存 {cells} 个权重，所以耗时和输出差异在 N = {cap} 处实测；"
              "尺寸和运算量仍按 N = {n} 计算。"},
    "notice.random_data": {
        "en": "Times are measured on seeded random Q, K, V of this size (the text has only {tokens} tokens).",
        "zh": "耗时是在这个规模的随机 Q、K、V（固定种子）上实测的（这段文本只有 {tokens} 个词元）。"},
    "notice.no_rf_theory": {
        "en": "The FAVOR+ variance formula (explorer.maps.rf_theory) is not in this build, so the m it asks for is not shown.",
        "zh": "这个版本里没有 FAVOR+ 的方差公式模块（explorer.maps.rf_theory），所以不显示它算出的 m。"},
    "notice.hedgehog_untrained": {
        "en": "No trained Hedgehog for layer {layer}, head {head} yet: showing the untrained map (W = I). Tick "
              "“train Hedgehog now” to train it on the training texts (the first run also reads those texts "
              "through the model, which takes the longest).",
        "zh": "第 {layer} 层第 {head} 个头还没有训练好的 Hedgehog，图中是未训练的映射（W = I）。"
              "勾选“现在训练 Hedgehog”即可在训练文本上训练（第一次还要让模型把这些文本读一遍，这一步最慢）。"},
    "notice.hedgehog_shipped": {
        "en": "The trained Hedgehog for layer {layer}, head {head} ships with the app: it was trained on the app's "
              "training texts, which do not include the lecture's own sentence.",
        "zh": "第 {layer} 层第 {head} 个头的 Hedgehog 是随应用附带的训练结果：它在应用自带的训练文本上训练，"
              "这些文本里没有讲座默认的那句话。"},
    "notice.recall_synthetic": {
        "en": "Recall is probed with random keys and values of this head's dimension (d = {d}), written into the "
              "state of the chosen map: it shows the memory, not this text.",
        "zh": "取回实验用的是与本注意力头同维（d = {d}）的随机键和值，写进所选映射的状态里：它反映的是记忆本身，与这段文本无关。"},
    "notice.hedgehog_untrained_model": {
        "en": "No trained Hedgehog ships for layer {layer}, head {head} of {model}: showing the untrained map "
              "(W = I). The app ships one for every head of its layer {shipped}, trained against its causal softmax.",
        "zh": "{model} 第 {layer} 层第 {head} 个头没有随应用附带训练好的 Hedgehog，图中是未训练的映射（W = I）。"
              "应用为它第 {shipped} 层的每个头都附带了一个，是对照它的因果 softmax 训练的。"},
    "notice.hedgehog_untrained_other": {
        "en": "No trained Hedgehog ships for {model}, and training here is for the embedded MiniLM's heads: "
              "showing the untrained map (W = I).",
        "zh": "应用没有为 {model} 附带训练好的 Hedgehog，而这里的训练只针对内置 MiniLM 的注意力头："
              "图中是未训练的映射（W = I）。"},
    "notice.causal_kl": {
        "en": "{model} is causal: each map is compared with causal softmax (keys j ≤ i) on this head, and the "
              "trained Hedgehog was trained against that causal softmax.",
        "zh": "{model} 是因果模型：每个映射都与这个头上的因果 softmax（只看 j ≤ i 的键）比较，"
              "训练过的 Hedgehog 也是对照这个因果 softmax 训练的。"},
    "notice.hybrid_embedded": {
        "en": "The hybrid panel swaps softmax layers of a bidirectional model, which {model} is not: it runs on "
              "the embedded {embedded} reading the English sentence.",
        "zh": "混合模型这张图替换的是双向模型的 softmax 层，而 {model} 不是双向模型：这张图改用内置的 MiniLM 模型，"
              "读的是英文例句。"},
    "notice.hybrid_embedded_text": {
        "en": "The hybrid panel swaps softmax layers of a bidirectional model, which {model} is not: it runs on "
              "the embedded {embedded} reading the same text.",
        "zh": "混合模型这张图替换的是双向模型的 softmax 层，而 {model} 不是双向模型：这张图改用内置的 MiniLM 模型，"
              "读的是同一段文本。"},
    "notice.hybrid_no_model": {
        "en": "The hybrid panel needs the embedded model reading a text; it is empty for random or uploaded data.",
        "zh": "混合模型这张图需要内置模型读一段文本；用随机数据或上传的数据时，它是空的。"},
    "notice.no_luna": {
        "en": "No trained LUNA map ships for layer {layer}, head {head} of this model: the roadmap leaves its point out.",
        "zh": "本模型第 {layer} 层第 {head} 个头没有随应用附带训练好的 LUNA 映射，路线图中略去这一点。"},
    "notice.causal_model": {
        "en": "This chapter reads {model}, a causal language model: each token sees only the tokens before it, as in "
              "the RNN. Causal softmax on its q, k reproduces the model's own attention to {diff}.",
        "zh": "本章读取的是因果语言模型 {model}：每个词元只看得到它前面的词元，和 RNN 一样。"
              "用它的 q、k 算出的因果 softmax 与模型自己的注意力相差不超过 {diff}。"},
    "notice.causal_roadmap": {
        "en": "The roadmap's causal points (RetNet, GLA and their elu+1 baseline) compare causal maps (keys j ≤ i) "
              "with causal softmax on the same head; the other points compare full attention with softmax.",
        "zh": "路线图中的因果点（RetNet、GLA 以及作为基准的 elu+1）比较的是同一个头上的因果映射（只看 j ≤ i 的键）"
              "与因果 softmax；其余各点比较的是完整注意力与 softmax。"},
    "notice.undefined_kl": {
        "en": "{map}: KL is undefined on {count} of {rows} rows (weights ≤ 0 where softmax has mass); the median is "
              "over the other rows.",
        "zh": "{map}：{rows} 行中有 {count} 行 KL 无定义（softmax 有权重的地方该映射的权重 ≤ 0），中位数只取其余各行。"},
    "notice.undefined_kl_some": {
        "en": "Rows of {rows} where KL is undefined (weights ≤ 0 where softmax has mass), left out of the median: {maps}.",
        "zh": "{rows} 行中 KL 无定义的行数（softmax 有权重的地方映射的权重 ≤ 0），中位数不计这些行：{maps}。"},
    "notice.undefined_kl_all": {
        "en": "{map}: KL is undefined on every one of the {rows} rows (weights ≤ 0 where softmax has mass), so it "
              "has no point on the plane.",
        "zh": "{map}：全部 {rows} 行的 KL 都无定义（softmax 有权重的地方该映射的权重 ≤ 0），所以图上没有它的点。"},
    "notice.not_shown_log": {
        "en": "{map}: {count} of {pairs} kernel values are ≤ 0 and cannot be drawn on log axes.",
        "zh": "{map}：{pairs} 个核函数值中有 {count} 个 ≤ 0，无法画在对数坐标上。"},
    "notice.sides_compressed": {
        "en": "sides drawn on a log scale, sizes as printed",
        "zh": "边长按对数尺度绘制，尺寸以标注为准"},
    "notice.profile_subset": {
        "en": "Kernel values are drawn for {shown} of {pairs} pairs (a seeded random subset).",
        "zh": "核函数值只画出了 {pairs} 对中的 {shown} 对（固定种子的随机子集）。"},
}


def t(key: str, lang: str = "en", **values) -> str:
    """The text of ``key`` in ``lang`` ("en" or "zh"; anything else falls back to English),
    formatted with ``values``."""
    entry = TEXT[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def notes(ch, lang: str = "en") -> list[str]:
    """The speaker's talking points for chapter ``ch`` in ``lang``, one string each."""
    return [line for line in t(f"notes.ch{int(ch)}", lang).split("\n") if line.strip()]


def map_name(label: str, lang: str = "en") -> str:
    """A map's name as the audience reads it: the catalogue's label, with its qualifier in
    ``lang`` ("FAVOR+ (orthogonal)" -> "FAVOR+（正交）"). Names without one stay as they are."""
    key = f"map.{label}"
    return t(key, lang) if key in TEXT else label


# ---------------------------------------------------------------- the numbers table
# Labels of the keys of ``ChapterView.numbers``: plain keys, then the per-map / per-step
# families, whose part in brackets (or suffix) is a name that stays as it is.
NUMBER_LABELS: dict[str, dict[str, str]] = {
    "n": {"en": "N (tokens)", "zh": "N（词元数）"},
    "d": {"en": "d (head dimension)", "zh": "d（头维度）"},
    "m": {"en": "m (features)", "zh": "m（特征数）"},
    "t": {"en": "step t", "zh": "第 t 步"},
    "tokens": {"en": "tokens of the text", "zh": "文本的词元数"},
    "pairs": {"en": "token pairs (N²)", "zh": "词元对的个数（N²）"},
    "bytes_f32": {"en": "N × N table, float32 (bytes)", "zh": "N × N 表，float32（字节）"},
    "bytes_f16": {"en": "N × N table, float16 (bytes)", "zh": "N × N 表，float16（字节）"},
    "quadratic_flops": {"en": "FLOPs, softmax order (N²)", "zh": "浮点运算数，softmax 顺序（N²）"},
    "linear_flops": {"en": "FLOPs, linear order", "zh": "浮点运算数，线性顺序"},
    "flop_ratio": {"en": "FLOP ratio, quadratic / linear", "zh": "浮点运算数之比（平方 / 线性）"},
    "article_n_from": {"en": "article's step: N from", "zh": "文中的跨度：起点 N"},
    "article_n_to": {"en": "article's step: N to", "zh": "文中的跨度：终点 N"},
    "article_pairs_from": {"en": "article's step: pairs at the start", "zh": "文中的跨度：起点的词元对个数"},
    "article_pairs_to": {"en": "article's step: pairs at the end", "zh": "文中的跨度：终点的词元对个数"},
    "article_growth": {"en": "article's step: growth of the pairs (×)", "zh": "文中的跨度：词元对个数增长的倍数"},
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
    "model_attention_max_abs_diff": {"en": "causal softmax against the model's own attention, max |difference|",
                                     "zh": "因果 softmax 与模型自身注意力的最大绝对差"},
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
    (r"roadmap_kl\[(?P<point>\w+)\]", {"en": "roadmap, {name}: median row KL", "zh": "路线图，{name}：逐行 KL 中位数"}),
    (r"recent_minus_early_at_(?P<lag>\d+)\[(?P<kind>\w+)\]",
     {"en": "recall at lag {lag}, recent minus early key, {name}", "zh": "滞后 {lag} 时近期键减早期键的取回，{name}"}),
    (r"recall_early_at_(?P<lag>\d+)\[(?P<kind>\w+)\]",
     {"en": "recall of an early key at lag {lag}, {name}", "zh": "间隔 {lag} 时早期键的取回余弦，{name}"}),
    (r"recall_recent_at_(?P<lag>\d+)\[(?P<kind>\w+)\]",
     {"en": "recall of a recent key at lag {lag}, {name}", "zh": "间隔 {lag} 时近期键的取回余弦，{name}"}),
    (r"hgrn2_lower_bound_layer(?P<layer>\d+)", {"en": "HGRN2, layer {layer}: lower bound of the forget gate",
                                                "zh": "HGRN2 第 {layer} 层：遗忘门的下限"}),
    (r"hgrn2_memory_layer(?P<layer>\d+)", {"en": "HGRN2, layer {layer}: shortest memory 1/(1 − lb), tokens",
                                           "zh": "HGRN2 第 {layer} 层：最短记忆 1/(1 − lb)（词元）"}),
    (r"roadmap_recall_early_at_(?P<lag>\d+)\[(?P<point>\w+)\]",
     {"en": "roadmap, {name}: recall of an early key at lag {lag}", "zh": "路线图，{name}：间隔 {lag} 时早期键的取回余弦"}),
    (r"roadmap_recall_recent_at_(?P<lag>\d+)\[(?P<point>\w+)\]",
     {"en": "roadmap, {name}: recall of a recent key at lag {lag}", "zh": "路线图，{name}：间隔 {lag} 时近期键的取回余弦"}),
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
            elif "point" in parts:       # a roadmap point: what it measured
                parts["name"] = road_label(parts.pop("point"), lang)
            elif "name" in parts:        # a map: its name as the audience reads it
                parts["name"] = map_name(parts["name"], lang)
            return (entry.get(lang) or entry["en"]).format(**parts)
    raise KeyError(f"no label for the number {key!r}")


def road_label(point: str, lang: str = "en", **values) -> str:
    """The label of a roadmap point by its id ("2024_gla"): in full with its settings when
    ``values`` are given, else the short name the numbers table uses."""
    return t(f"road.{point}", lang, **values) if values else t(f"road.short.{point}", lang)


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
