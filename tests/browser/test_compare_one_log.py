"""A sample only one of two eval logs holds opens its run alone, in real JupyterLab (spec B-3).

``tests/fixtures/compare-qa`` holds two versions of one task made with the real ``inspect_ai``:
``s6`` (11 + 12, answered 23) only in v1, ``s7`` (13 + 14, answered 27) only in v2. Fixtures and
helpers are documented in ``conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.browser.labkit import Lab

COMPARE_QA = Path(__file__).parents[1] / "fixtures" / "compare-qa"
TWO_LOGS = f"""\
import os, tempfile
os.environ["TURNFOLD_CACHE_DIR"] = tempfile.mkdtemp()
import turnfold
widget = turnfold.compare({str(COMPARE_QA / "qa_v1.eval")!r}, {str(COMPARE_QA / "qa_v2.eval")!r},
                          names=("v1", "v2"))"""


def test_B3_a_row_of_a_sample_one_log_holds_opens_its_transcript_on_its_side(lab: Lab) -> None:
    widget = lab.open_notebook("compare-one-log.ipynb", [TWO_LOGS, "widget"])
    rows = widget.locator(".tf-cmp-table tbody tr")
    expect(rows).to_have_count(4)  # two changed samples, then s6 and s7
    only_v1 = widget.locator('.tf-cmp-table tr[data-only="a"]')
    expect(only_v1.locator("td").nth(1)).to_have_text("Only in v1")
    expect(only_v1.locator("td").nth(3)).to_have_text("Not in v2")

    only_v1.locator(".tf-cmp-pick").click()
    expect(only_v1.locator(".tf-cmp-pick")).to_have_attribute("aria-current", "true")
    expect(widget.locator(".tf-cmp > .tf-cmp-summary")).to_have_text(
        "Only in v1: v2 does not hold this sample"
    )
    left, right = (widget.locator(f'.tf-pair .tf-col[data-side="{side}"]') for side in "ab")
    expect(right.locator(".tf-gap")).to_have_text("Not in v2")
    expect(left).to_contain_text("What is 11 + 12?")
    expect(left).to_contain_text("23")  # its answer, shown as its own view shows it
    assert widget.locator(".tf-cmp-table tr.tf-selected").count() == 1
    lab.screenshot("compare-one-log-v1.png", widget)

    # The keyboard reaches the other log's sample too: it opens on the right.
    only_v1.locator(".tf-cmp-pick").focus()
    lab.page.keyboard.press("ArrowDown")
    lab.page.keyboard.press("Enter")
    only_v2 = widget.locator('.tf-cmp-table tr[data-only="b"]')
    expect(only_v2.locator(".tf-cmp-pick")).to_have_attribute("aria-current", "true")
    expect(left.locator(".tf-gap")).to_have_text("Not in v1")
    expect(right).to_contain_text("What is 13 + 14?")
    expect(right).to_contain_text("27")
