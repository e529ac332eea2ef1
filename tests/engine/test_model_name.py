"""The causal model is named for what it is, "SmolLM2-135M-Instruct (Q4_1, de-quantised to
float32)", wherever a person reads its name; links, requests and exports keep its id
"SmolLM2-135M" (issue 23, point 4). Before, the page and the docs said "SmolLM2-135M" and
nothing said the weights come from a 4-bit GGUF file."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest

from explorer import catalog
from explorer.text import Message, ModelName, model_name, say

ROOT = Path(__file__).resolve().parents[2]
ID = catalog.CAUSAL_MODEL["name"]
FULL = "SmolLM2-135M-Instruct (Q4_1, de-quantised to float32)"


def test_the_id_stays_and_the_name_says_the_file():
    assert ID == "SmolLM2-135M"
    assert model_name(ID, "en") == FULL
    zh = model_name(ID, "zh")
    assert zh.startswith("SmolLM2-135M-Instruct") and "Q4_1" in zh and "float32" in zh and "反量化" in zh
    assert model_name("gpt2", "zh") == "gpt2"                      # other ids as they are
    name = ModelName(ID)
    assert name == ID and json.dumps({"model": name}) == '{"model": "SmolLM2-135M"}'
    assert pickle.loads(pickle.dumps(name)).say("zh") == zh


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_picker_and_the_messages_name_it_in_full(lang):
    full = model_name(ID, lang)
    assert say("sources.choice_causal", lang).startswith(full)
    assert say("sources.choice_causal_missing", lang).startswith(full)
    source = Message("sources.from_text", model=ModelName(ID), n=12, tail=Message("sources.from_text_causal"))
    assert source.say(lang).startswith(full)
    assert say("sources.converting", lang, name=ModelName(ID), elapsed=1, total=45).count(full) == 1
    assert full in say("learn.summary_causal", lang, model=ModelName(ID))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lectures_notices_name_it_in_full(lang):
    from explorer.lecture.text import t

    assert model_name(ID, lang) in t("notice.causal_kl", lang, model=ModelName(ID))


def test_the_docs_name_it_in_full():
    assert FULL in (ROOT / "README.md").read_text(encoding="utf-8")
    models = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert models.splitlines()[2].startswith(FULL) and "Q4_1.gguf" in models


@pytest.mark.skipif(not catalog.causal_model_installed(), reason="the causal model is not installed")
def test_a_sample_it_read_names_it_in_full_and_keeps_the_id():
    from explorer import sources

    sample = sources.from_text("the cat sat", model=ID)
    assert sample.info["model"] == ID
    assert str(sample.source).startswith(FULL) and sample.source.say("zh").startswith(model_name(ID, "zh"))


# Where a person reads the model's name: the docs, the page's words, the install files. There
# the id "SmolLM2-135M" may stand as an id (`model=SmolLM2-135M`, "SmolLM2-135M" in code) or
# as the start of the full name, never bare, as if it were the name of the file read.
PERSON_FACING = ["README.md", "docs/*.md", "explorer/text/*/*.toml", "requirements*.txt", "scripts/*.sh",
                 "assets/*.js", "assets/*.html"]
BARE = re.compile(r"""(?<![`"'=/\w-])SmolLM2-135M(?![-\w`"'])""")


def bare_uses(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if "_kept_in_latin" in line or line.lstrip().startswith('"MiniLM"'):
            continue                  # the list of names Chinese keeps in Latin letters
        out += [line.strip()[:100] for _ in BARE.finditer(line)]
    return out


def test_no_text_a_person_reads_names_it_by_the_bare_id():
    found = {}
    for pattern in PERSON_FACING:
        for path in sorted(ROOT.glob(pattern)):
            uses = bare_uses(path.read_text(encoding="utf-8"))
            if uses:
                found[str(path.relative_to(ROOT))] = uses
    assert found == {}


@pytest.mark.parametrize("line, bare", [
    ("the causal model SmolLM2-135M (converted once)", True),
    ("print('SmolLM2-135M ready in', folder)", False),          # quoted: caught only where it is said
    ("SmolLM2-135M-Instruct (Q4_1, de-quantised to float32)", False),
    ("links name it `model=SmolLM2-135M`", False),
    ('from_text(text, model="SmolLM2-135M")', False),
])
def test_the_scan_tells_an_id_from_a_bare_name(line, bare):
    assert bool(bare_uses(line)) == bare
