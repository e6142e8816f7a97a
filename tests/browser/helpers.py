"""What the browser tests check on every screen: console errors, axe-core's serious and
critical violations, and anything cut off at the screen's edge."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.models import Dataset, TaskFile
from datasets_app.services import datasets, imports
from tests.conftest import FILES

AXE = "/static/vendor/axe-core/axe.min.js"


def watch_console(page) -> list[str]:
    """Every console error and uncaught exception the page has from now on."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def axe_violations(page, live_server_url: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(url=live_server_url + AXE)
    results = page.evaluate(
        """async () => {
            const found = await axe.run(document, {resultTypes: ["violations"]});
            return found.violations
              .filter((v) => v.impact === "serious" || v.impact === "critical")
              .map((v) => `${v.impact} ${v.id}: ${v.help} at ` +
                   v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; "));
        }"""
    )
    return list(results)


CLIPPED = """() => {
  // Anything visible that reaches past the screen's left or right edge, or is cut off
  // inside a box that hides or scrolls its overflow sideways.
  const width = document.documentElement.clientWidth;
  const found = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className
      ? "." + el.className.split(" ").join(".") : "");
  for (const el of document.querySelectorAll("body *")) {
    const skipped = ".visually-hidden, [hidden], noscript, dialog:not([open]), " +
      "table.stack thead, #result_list thead";
    if (el.closest(skipped)) {
      continue;
    }
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.left < -1 || box.right > width + 1) {
      found.push(`${name(el)} spans ${Math.round(box.left)}..${Math.round(box.right)} of ${width}`);
    }
    const hides = ["auto", "scroll", "hidden", "clip"].includes(style.overflowX);
    const field = ["TEXTAREA", "SELECT", "INPUT"].includes(el.tagName);
    if (hides && !field && el.scrollWidth > el.clientWidth + 1) {
      found.push(`${name(el)} hides ${el.scrollWidth - el.clientWidth}px sideways`);
    }
  }
  if (document.documentElement.scrollWidth > width + 1) {
    found.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${width})`);
  }
  return found.slice(0, 12);
}"""


def clipped(page) -> list[str]:
    return list(page.evaluate(CLIPPED))


def dataset_with_everything(owner, *, name: str = "Finance QA") -> Dataset:
    """A saved dataset with criteria for every task, a draft, weights with decimals and
    files of both kinds: what the screens have to lay out."""
    dataset = datasets.dataset_create(owner=owner, name=name, description="Support answers.")
    data = (FILES / "json" / "rubric_template.json").read_bytes()
    upload = imports.upload_create(
        owner=owner, dataset=dataset, uploaded_file=SimpleUploadedFile("rubric.json", data)
    )
    imports.upload_check(upload=upload)
    imports.import_run(upload=upload, mode="add")
    task = dataset.tasks.get()
    task.criteria.filter(criterion_id="apology").update(weight=3.5)
    for role, file_name in (("expected", "answer-key.pdf"), ("input", "order-4417.pdf")):
        TaskFile.objects.create(
            task=task, role=role, name=file_name, url=f"https://files.example/{file_name}"
        )
    datasets.version_save(dataset=dataset, user=owner)
    return dataset
