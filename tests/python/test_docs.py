"""Every ```python block of docs/python.md runs and its assertions hold."""
import os
import re
from pathlib import Path

import pytest

DOC = Path(os.environ.get("CONSTRINT_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index):
    exec(compile(BLOCKS[index], f"{DOC.name} example {index + 1}", "exec"), {})
