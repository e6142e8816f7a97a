"""Post a page's form back exactly as a browser would send it, untouched.

An unchanged save must change nothing, so tests load each form and submit what the page
shows: text and hidden inputs with their values, checked boxes and radios, each select's
selected options (a single choice: else its first), and textareas as a browser reads them
(one newline after the opening tag dropped) and sends them (every line break as CRLF).
What a <template> holds is not sent.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_VOID_INPUTS_SENT_WHEN_CHECKED = {"checkbox", "radio"}
_NOT_SENT = {"submit", "button", "reset", "image", "file"}


class _Form:
    def __init__(self, attrs: dict[str, str | None]) -> None:
        self.attrs = attrs
        self.fields: list[tuple[str, str]] = []


class _FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[_Form] = []
        self._form: _Form | None = None
        self._textarea: tuple[str, list[str]] | None = None
        self._select: tuple[str, bool, list[tuple[str, bool]]] | None = None
        self._option: tuple[str | None, bool, list[str]] | None = None
        # Inside a <template> (a form to copy, such as an empty criterion): never sent.
        self._templates = 0

    def handle_starttag(self, tag: str, attrs_list) -> None:
        attrs = dict(attrs_list)
        if tag == "template":
            self._templates += 1
        if self._templates:
            return
        if tag == "form":
            self._form = _Form(attrs)
            self.forms.append(self._form)
            return
        if self._form is None or "disabled" in attrs:
            return
        name = attrs.get("name")
        if tag == "input" and name:
            kind = (attrs.get("type") or "text").lower()
            if kind in _NOT_SENT:
                return
            if kind in _VOID_INPUTS_SENT_WHEN_CHECKED:
                if "checked" in attrs:
                    self._form.fields.append((name, attrs.get("value") or "on"))
                return
            self._form.fields.append((name, attrs.get("value") or ""))
        elif tag == "textarea" and name:
            self._textarea = (name, [])
        elif tag == "select" and name:
            self._select = (name, "multiple" in attrs, [])
        elif tag == "option" and self._select is not None:
            self._option = (attrs.get("value"), "selected" in attrs, [])

    def handle_data(self, data: str) -> None:
        if self._templates:
            return
        if self._textarea is not None:
            self._textarea[1].append(data)
        elif self._option is not None:
            self._option[2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "template":
            self._templates -= 1
        if self._templates:
            return
        if tag == "form":
            self._form = None
        elif tag == "textarea" and self._textarea is not None and self._form is not None:
            name, parts = self._textarea
            value = "".join(parts)
            # HTML drops one newline right after <textarea>; the browser sends CRLF.
            if value.startswith("\n"):
                value = value[1:]
            value = re.sub(r"\r\n|\r|\n", "\r\n", value)
            self._form.fields.append((name, value))
            self._textarea = None
        elif tag == "option" and self._option is not None and self._select is not None:
            value, selected, parts = self._option
            self._select[2].append((value if value is not None else "".join(parts), selected))
            self._option = None
        elif tag == "select" and self._select is not None and self._form is not None:
            name, multiple, options = self._select
            chosen = [value for value, selected in options if selected]
            if not multiple:
                # One choice: the last one selected, else the first option.
                chosen = chosen[-1:] or [value for value, _ in options[:1]]
            self._form.fields.extend((name, value) for value in chosen)
            self._select = None


def forms_of(page: str) -> list[_Form]:
    reader = _FormReader()
    reader.feed(page)
    reader.close()
    return reader.forms


def form_data(page: str, *, method: str = "post", having: str | None = None) -> dict:
    """The fields the page's form would send, as a dict of lists (for the test client).

    The form is the first with that method that has a field named `having`, or without
    it, the first that submits to the page itself (no `action`, unlike the header's Log out).
    """
    for form in forms_of(page):
        if (form.attrs.get("method") or "get").lower() != method:
            continue
        if having is None and form.attrs.get("action"):
            continue
        names = [name for name, _ in form.fields]
        if having is not None and having not in names:
            continue
        data: dict[str, list[str]] = {}
        for name, value in form.fields:
            data.setdefault(name, []).append(value)
        return data
    raise AssertionError(f"No {method} form{f' with {having}' if having else ''} on the page")
