"""Every ```python block in docs/ (its subfolders too) and README.md runs: the blocks of one page
run in order in one namespace, in a fresh working directory, so a page's examples can build on
each other."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_the_docs_exist_and_have_examples():
    names = {page.name for page in PAGES}
    assert {"design.md", "reading-order.md", "tensors-and-autograd.md", "nn.md", "training.md", "data.md",
            "checkpoints.md", "profiling.md", "milestones.md"} <= names
    guides = [page for page in PAGES if page.parent.name == "docs" and page.stem not in
              ("contributing", "distributed", "random")]  # those show files and commands instead
    assert all(BLOCK.search(page.read_text(encoding="utf-8")) for page in guides)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_examples_run(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    namespace = {"__name__": f"docs_{page.stem}"}
    for number, block in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")), 1):
        code = compile(block, f"{page.name} (example {number})", "exec")
        exec(code, namespace)


def test_the_add_an_op_walk_through_shows_the_code_as_it_is():
    """docs/contributing.md's excerpts (```py blocks) are hypot's code as it stands: every line of
    each (the ``...`` elisions aside) is a line of the files it walks through, so the guide cannot
    drift from the op it follows."""
    excerpts = re.findall(r"^```py\n(.*?)^```", (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8"),
                          re.S | re.M)
    sources = {line.strip() for name in ("src/ember/_ops/pointwise_float.py", "src/ember/_tensor.py",
                                         "tests/ops/test_pointwise.py")
               for line in (ROOT / name).read_text(encoding="utf-8").splitlines()}
    assert len(excerpts) >= 4
    for excerpt in excerpts:
        lines = [line.strip() for line in excerpt.splitlines() if line.strip() not in ("", "...")]
        # (a line may elide its end: "... , ..." stands for the rest of the file's line)
        missing = [line for line in lines if line not in sources and not (
            line.endswith("...") and any(s.startswith(line[:-3].rstrip()) for s in sources))]
        assert not missing, f"docs/contributing.md shows lines the code does not have: {missing}"
