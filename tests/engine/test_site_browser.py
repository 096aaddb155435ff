"""The static site in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`), driven by Selenium, opens the site of the official store from file://,
and the site of a context sweep (tests/engine/conftest.py's `context_sweep`) for its Score
against context section.

Without Chromium these tests fail with one line saying so, unless GENEB_NO_BROWSER=1 is set
(then they are skipped, with that reason). With GENEB_SCREENSHOTS=1 they also write the docs'
screenshots (docs/assets/site-index.png, site-model.png)."""

from __future__ import annotations

import os
import random
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import polars as pl
import pytest

from engine.site.build import TEMPLATES
from store.catalog import params_text
from store.paths import resolve_store
from store.tables.catalogs import models_with_builtins
from store.tables.results import append_rows
from tests.engine.conftest import CONTEXT_CATEGORIES, CONTEXT_RESAMPLES
from tests.engine.site_build import build_site, cli_json, report, site_document
from tests.helpers import sweep_size
from tests.store.local_rows import local_rows

pytestmark = pytest.mark.xdist_group("browser")   # one worker, one browser per module

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
NO_BROWSER = "GENEB_NO_BROWSER"
DOCS_ASSETS = Path(__file__).resolve().parents[2] / "docs" / "assets"
# A model id that would run if a page parsed store text as HTML (a valid hub id org/name).
HOSTILE = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"

if CHROMIUM is None or DRIVER is None:
    WHY = ("Chromium and its driver are missing (apt-get install chromium chromium-driver); "
           f"set {NO_BROWSER}=1 to skip the browser tests")
    if os.environ.get(NO_BROWSER):
        pytest.skip(f"browser tests skipped: {NO_BROWSER} is set and {WHY.split(';')[0]}",
                    allow_module_level=True)
    pytest.fail(WHY, pytrace=False)

from selenium import webdriver  # noqa: E402  (only where Chromium is)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def driver():
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def site(official_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "site"
    build_site(official_store.root, out)
    return out, site_document(out)


def _open(driver, path: Path):
    """Load the page afresh (the same address again reloads it) and wait for its script."""
    driver.get("about:blank")
    driver.get(path.as_uri())
    WebDriverWait(driver, 20).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && !!window.GENEB_SITE"))
    return driver


def _errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _shown(driver) -> list[str]:
    return [tr.get_attribute("data-model")
            for tr in driver.find_elements(By.CSS_SELECTOR, "#board tbody tr")]


def _leader(rep: dict) -> str:
    return next(r["model"] for r in rep["leader_tie_group"] if r["leader"])


def test_the_site_writes_a_parameter_count_as_every_other_surface(driver):
    """The site's script (`paramsText`, run in the browser) and `store.catalog.params_text`
    (the command line, the dashboard, the figures) write the same counts alike."""
    script = (TEMPLATES / "site.js").read_text()
    function = re.search(r"^  function paramsText\(n\) \{$.*?^  \}$", script, re.S | re.M)
    counts = [0, 999, 1_000, 7_500_000, 19_710_474, 117_000_000, 1_234_567, 999_999,
              1_200_000_000, 2_500_000_000, 10**12]
    shown = driver.execute_script(f"{function.group(0)}\nreturn arguments[0].map(paramsText);",
                                  counts)
    assert shown == [params_text(n) for n in counts]


def test_regime_and_metric_switch_the_leader_to_the_reports(driver, site, official_store):
    out, _ = site
    _open(driver, out / "index.html")
    leader = driver.find_element(By.ID, "leader")
    assert leader.get_attribute("data-model") == _leader(
        report(official_store.root, metric="mcc", regime="full"))
    # Friedman's P of the full regime underflows: said as the report says it, never "0.00"
    assert "tasks (1 is best). Friedman P < 1e-300; Nemenyi" in \
        driver.find_element(By.ID, "cd-note").text
    for metric, regime in (("acc", "10shot"), ("f1_macro", "1shot")):
        Select(driver.find_element(By.ID, "regime")).select_by_value(regime)
        Select(driver.find_element(By.ID, "metric")).select_by_value(metric)
        assert leader.get_attribute("data-model") == _leader(
            report(official_store.root, metric=metric, regime=regime))
    assert _errors(driver) == []


def test_size_and_architecture_filters_leave_exactly_their_rows(driver, site, official_store):
    out, _ = site
    _open(driver, out / "index.html")
    catalog = models_with_builtins(official_store).filter(
        pl.col("model_id").is_in(_shown(driver)))      # the store's 40 models
    assert catalog.height == 40

    def expected(**match) -> list[str]:
        return sorted(catalog.filter(**match)["model_id"])

    Select(driver.find_element(By.ID, "size")).select_by_value("<100M")
    assert sorted(_shown(driver)) == expected(scale_band="<100M") and len(_shown(driver)) == 11
    Select(driver.find_element(By.ID, "architecture")).select_by_value("Transformer encoder")
    both = expected(scale_band="<100M", architecture_family="Transformer encoder")
    assert sorted(_shown(driver)) == both and len(both) == 5
    Select(driver.find_element(By.ID, "size")).select_by_value("")
    assert sorted(_shown(driver)) == expected(architecture_family="Transformer encoder")


def test_sorting_orders_the_rows(driver, site, official_store):
    out, _ = site
    _open(driver, out / "index.html")
    micro = {r["model"]: r["micro"] for r in
             report(official_store.root, metric="mcc", regime="full")["aggregates"]}
    by_micro = sorted(micro, key=lambda m: -micro[m])
    assert _shown(driver) != by_micro                          # macro order first
    driver.find_element(By.CSS_SELECTOR, '#board th[data-col="micro"]').click()
    assert _shown(driver) == by_micro
    driver.find_element(By.CSS_SELECTOR, '#board th[data-col="micro"]').click()
    assert _shown(driver) == by_micro[::-1]


def _links(driver) -> set[str]:
    return set(driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"))


# The pages the link check opens in the browser beyond the index: every page under `make
# test-full`; under `make test` a seeded sample (the index's links still name every page, and
# each link's file is checked to exist).
PAGES_OPENED = sweep_size(full=10**6, sampled=12)


def test_every_internal_link_resolves(driver, site):
    """Every link is internal and names a page of the site, every page is linked from the index
    (its tabs and every category), and the pages opened render with a heading and links that
    resolve too."""
    out, doc = site
    _open(driver, out / "index.html")
    found = _links(driver)
    driver.find_element(By.ID, "tab-tasks").click()
    for category in doc["categories"]:
        Select(driver.find_element(By.ID, "task-category")).select_by_visible_text(category)
        found |= _links(driver)

    def page_of(url: str) -> Path:
        parsed = urlparse(url)
        assert parsed.scheme == "file", url                      # no external link
        path = Path(unquote(parsed.path))
        assert path.is_file() and out in path.parents, url
        return path

    linked = {page_of(u) for u in found}
    pages = set(out.rglob("*.html"))
    assert linked | {out / "index.html"} == pages
    opened = random.Random(20261206).sample(sorted(linked), min(PAGES_OPENED, len(linked)))
    for path in opened:
        _open(driver, path)
        assert driver.find_element(By.TAG_NAME, "h1").text, path
        assert {page_of(u) for u in _links(driver)} <= pages
    assert _errors(driver) == []


def test_a_model_id_carrying_markup_is_shown_as_text(driver, official_store, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(official_store.root, store)
    append_rows(resolve_store(store), local_rows(HOSTILE, regimes=("full",)))
    out = tmp_path / "site"
    build_site(store, out, "--resamples", "0")
    doc = site_document(out)
    _open(driver, out / "index.html")
    cells = {tr.get_attribute("data-model"): tr
             for tr in driver.find_elements(By.CSS_SELECTOR, "#board tbody tr")}
    assert HOSTILE in cells
    assert cells[HOSTILE].find_element(By.CSS_SELECTOR, "td a").text == HOSTILE
    assert cells[HOSTILE].find_element(By.CSS_SELECTOR, ".badge").text == "Local"
    page = next(m["page"] for m in doc["models"] if m["id"] == HOSTILE)
    _open(driver, out / page)
    assert driver.find_element(By.ID, "title").text == HOSTILE
    assert driver.execute_script("return window.pwned === undefined")
    assert _errors(driver) == []


def test_screenshots_for_the_docs(driver, site):
    if not os.environ.get("GENEB_SCREENSHOTS"):
        pytest.skip("GENEB_SCREENSHOTS is not set: the docs' screenshots are not rewritten")
    out, doc = site
    DOCS_ASSETS.mkdir(exist_ok=True)
    driver.set_window_size(1280, 800)
    _open(driver, out / "index.html").save_screenshot(str(DOCS_ASSETS / "site-index.png"))
    model = next(m for m in doc["models"] if m["id"] == "GROVER")
    _open(driver, out / model["page"]).save_screenshot(str(DOCS_ASSETS / "site-model.png"))
    assert (DOCS_ASSETS / "site-model.png").stat().st_size < 400_000


def test_a_geneb_mini_site_shows_no_null_interval_and_the_rules_basis(driver, tmp_path):
    """Issue 41: the site of a geneb-mini store (one task per category: no macro interval)
    showed "null–null" rank intervals and "no other entry's rank interval overlaps the
    leader's". Now a dash, and the leader's line rests on the rule's test."""
    from tests.engine.site_build import mini_store

    paths = mini_store(tmp_path / "store")
    out = tmp_path / "site"
    build_site(paths.root, out, "--suite", "geneb-mini")
    _open(driver, out / "index.html")
    rows = driver.find_elements(By.CSS_SELECTOR, "#board tbody tr")
    assert len(rows) == 3
    for tr in rows:
        cells = [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        assert not any("null" in c for c in cells) and cells[5:7] == ["\u2014", "\u2014"]
    leader = driver.find_element(By.ID, "leader")
    assert leader.get_attribute("data-model") == "kmer-6"
    assert "rank interval" not in leader.text
    assert leader.text.endswith("every other entry is separably behind it (the sign-flip test "
                                "of the 13 tasks' differences against the leader, p \u2264 "
                                "0.05/2, with the bootstrap interval of the difference "
                                "excluding 0)")
    assert _errors(driver) == []


def test_a_lone_entry_is_never_said_to_beat_the_others(driver, tmp_path):
    """A site of one model: its leader's line says it has none to compare it with (it said
    "every other entry is separably behind it" of no other entry)."""
    from tests.engine.site_build import mini_store

    paths = mini_store(tmp_path / "store", models=("kmer-3",))
    build_site(paths.root, tmp_path / "site", "--suite", "geneb-mini")
    _open(driver, tmp_path / "site" / "index.html")
    leader = driver.find_element(By.ID, "leader")
    assert leader.get_attribute("data-model") == "kmer-3"
    assert leader.text.endswith("; the only entry with every task of this regime: none to "
                                "compare it with"), leader.text
    assert _errors(driver) == []


def _cells(driver, rows: str) -> list[list[str]]:
    return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in driver.find_elements(By.CSS_SELECTOR, rows)]


def test_the_context_section_shows_the_reports_curve_at_each_scope(driver, context_sweep):
    """Score against context: a row per point of the scope chosen (macro, then each category,
    its name shown as text), each the values `report --json` prints (a model and an entry by
    their display names); no section in a regime without a curve."""
    store, suite, site = context_sweep
    curve = cli_json("report", "--store", store, "--suite", suite,
                     "--resamples", CONTEXT_RESAMPLES)["context_curve"]
    display = {m["id"]: m["display"] for m in site_document(site)["models"]}
    _open(driver, site / "index.html")
    section = driver.find_element(By.ID, "context")
    assert section.find_element(By.TAG_NAME, "h2").text == "Score against context"
    scope = Select(driver.find_element(By.ID, "context-scope"))
    assert [o.text for o in scope.options] == ["Macro", *CONTEXT_CATEGORIES]
    for shown, value in (("Macro", "macro"), *((c, c) for c in CONTEXT_CATEGORIES)):
        scope.select_by_visible_text(shown)
        assert [th.text for th in section.find_elements(By.CSS_SELECTOR, "thead th")] == [
            "Model", "Context", "Length", "Entry", shown, "Low", "High"]
        want = [[display[c["model"]], c["context"],
                 "own limit" if c["context_length"] is None else str(c["context_length"]),
                 display[c["entry"]], *(f"{c[k]:.3f}" for k in ("value", "low", "high"))]
                for c in curve if c["scope"] == value]
        assert len(want) == 6 and _cells(driver, "#context-table tbody tr") == want
    Select(driver.find_element(By.ID, "regime")).select_by_value("10shot")
    assert not section.is_displayed()                       # the sweep filled full only
    assert _errors(driver) == []
