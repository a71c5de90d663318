"""Every ```python block of docs/python-flashrnn.md runs and its assertions hold."""
import os
import re
from pathlib import Path

import pytest

DOC = (Path(os.environ.get("CONSTRINT_SOURCE_DIR", Path(__file__).resolve().parents[3]))
       / "docs" / "python-flashrnn.md")
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5


def test_the_training_example_is_about_20_lines():
    assert len(BLOCKS[0].strip().splitlines()) <= 22


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index):
    exec(compile(BLOCKS[index], f"{DOC.name} example {index + 1}", "exec"), {})
