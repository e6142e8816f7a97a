// The little the pages need beyond htmx: the import dialog (open it once its content has
// arrived; showModal moves focus into it and Escape closes it), focus on a result when it
// arrives, and menu buttons. Every page works without this file.

// A result that arrives (a checked file, the other mode's preview) takes focus on its
// heading, so that keyboard and screen-reader users land on it rather than on <body>.
function focusResult(target) {
  const region = target && target.isConnected ? target : document.getElementById(target?.id);
  if (!region) {
    return;
  }
  const heading = region.matches("[data-result-heading]")
    ? region
    : region.querySelector("[data-result-heading]");
  if (heading && !heading.contains(document.activeElement)) {
    heading.focus();
  }
}

document.addEventListener("htmx:afterSettle", (event) => {
  const target = event.detail.target;
  const dialog = target?.isConnected ? target.closest("dialog") : null;
  if (dialog && !dialog.open) {
    dialog.showModal();
  }
  focusResult(target);
});

document.addEventListener("click", (event) => {
  const closer = event.target.closest("[data-close-dialog]");
  if (closer) {
    event.preventDefault();
    closer.closest("dialog")?.close();
  }
});

// Menu buttons (WAI-ARIA's menu button pattern): Enter, Space or Down opens the menu on its
// first item, Up on its last; arrows, Home and End move; Escape closes it and returns to
// the button; Tab or a click elsewhere closes it. Without this script the page shows the
// menu's items as plain links instead (a <noscript> twin).
function setUpMenu(root) {
  const button = root.querySelector("[aria-haspopup=menu]");
  const menu = root.querySelector("[role=menu]");
  if (!button || !menu) {
    return;
  }
  const items = () => Array.from(menu.querySelectorAll("[role=menuitem]"));
  button.hidden = false;

  function place() {
    // Open toward whichever side has room, so that a narrow screen never clips the menu.
    menu.classList.remove("menu-start");
    if (menu.getBoundingClientRect().left < 0) {
      menu.classList.add("menu-start");
    }
  }
  function open(which) {
    menu.hidden = false;
    button.setAttribute("aria-expanded", "true");
    place();
    const list = items();
    (which === "last" ? list[list.length - 1] : list[0])?.focus();
  }
  function close(refocus) {
    if (menu.hidden) {
      return;
    }
    menu.hidden = true;
    button.setAttribute("aria-expanded", "false");
    if (refocus) {
      button.focus();
    }
  }

  button.addEventListener("click", () => (menu.hidden ? open("first") : close(true)));
  button.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      open(event.key === "ArrowUp" ? "last" : "first");
    }
  });
  menu.addEventListener("keydown", (event) => {
    const list = items();
    const index = list.indexOf(document.activeElement);
    const moves = {
      ArrowDown: (index + 1) % list.length,
      ArrowUp: (index - 1 + list.length) % list.length,
      Home: 0,
      End: list.length - 1,
    };
    if (event.key in moves) {
      event.preventDefault();
      list[moves[event.key]].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close(true);
    } else if (event.key === "Tab") {
      close(false);
    } else if (event.key === " ") {
      // Links act on Enter by themselves; a menu item acts on Space too.
      event.preventDefault();
      document.activeElement.click();
    }
  });
  menu.addEventListener("click", (event) => {
    if (event.target.closest("[role=menuitem]")) {
      close(false);
    }
  });
  document.addEventListener("click", (event) => {
    if (!root.contains(event.target)) {
      close(false);
    }
  });
}

document.querySelectorAll("[data-menu]").forEach(setUpMenu);

// Keys for a page's actions (the review page's j, k, r, e, d): an element with
// data-shortcut="j" is clicked when j is pressed, unless the person is typing in a field
// or holds a modifier. Each such element is a plain link or button, which works without
// this script; aria-keyshortcuts tells assistive technology the key.
document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) {
    return;
  }
  const typing = event.target.closest?.("input, textarea, select, [contenteditable]");
  if (typing || document.querySelector("dialog[open]")) {
    return;
  }
  const action = document.querySelector(`[data-shortcut="${CSS.escape(event.key)}"]`);
  if (action) {
    event.preventDefault();
    action.click();
  }
});

// A verifier's fields: under the kind, what that kind does (each option carries it); the
// fields only other kinds read (output type, instructions, code) are hidden while empty.
// One that holds a value stays in sight, and is posted, whatever the kind: nothing typed or
// imported is dropped unseen. Without this script every field shows.
function setUpVerifier(root) {
  const kind = root.querySelector("select");
  const help = root.querySelector("[data-kind-help]");
  if (!kind || root.dataset.ready) {
    return;
  }
  root.dataset.ready = "1";
  function show() {
    const option = kind.selectedOptions[0];
    if (help && option) {
      help.textContent = option.dataset.help || "";
    }
    root.querySelectorAll("[data-kinds]").forEach((part) => {
      const field = part.querySelector("select, textarea, input");
      const empty = !field || !field.value;
      part.hidden = empty && !part.dataset.kinds.split(" ").includes(kind.value);
    });
  }
  kind.addEventListener("change", show);
  show();
}

document.querySelectorAll("[data-verifier]").forEach(setUpVerifier);
document.addEventListener("htmx:load", (event) => {
  event.detail.elt.querySelectorAll?.("[data-verifier]").forEach(setUpVerifier);
});

// Reopening the import dialog from its menu shows it as it was left (a mapping changed but
// not used yet, a preview ready to import) instead of fetching a fresh one: closing it
// loses nothing. "Choose another file", inside it, starts again. Without this script the dialog
// is a page of its own.
document.addEventListener(
  "click",
  (event) => {
    const opener = event.target.closest?.('[hx-target="#import-dialog"]');
    const dialog = document.getElementById("import-dialog");
    if (!opener || !dialog || opener.closest("dialog") || dialog.open) {
      return;
    }
    // Kept: a mapping being chosen, or a preview ready to import. A file with problems is
    // not: reopening offers a fresh choice of file.
    const kept = ".mapping-fields select, .modal-foot button.primary:not([disabled])";
    if (!dialog.querySelector('input[name="upload"]') || !dialog.querySelector(kept)) {
      return;
    }
    // Before htmx hears the click: nothing is fetched, the dialog opens as it was.
    event.preventDefault();
    event.stopPropagation();
    const menu = opener.closest("[data-menu]");
    if (menu) {
      menu.querySelector("[role=menu]").hidden = true;
      menu.querySelector("[aria-haspopup=menu]").setAttribute("aria-expanded", "false");
    }
    dialog.showModal();
  },
  true,
);

// A mapping being chosen is kept across a reload of the page too (the dialog comes back to
// the unfinished upload, `views.import_dialog`): each select's choice is remembered for its
// upload in the tab's sessionStorage, and put back when that upload's mapping shows again.
function mappingStore(select) {
  const scope = select.closest("form") || select.closest("dialog") || document;
  const upload = scope.querySelector('input[name="upload"]');
  return upload ? `mapping:${upload.value}` : null;
}

function readMapping(store) {
  try {
    return JSON.parse(sessionStorage.getItem(store) || "{}");
  } catch {
    return {};
  }
}

document.addEventListener("change", (event) => {
  const select = event.target.closest?.(".mapping-fields select");
  const store = select && mappingStore(select);
  if (!store) {
    return;
  }
  const chosen = readMapping(store);
  chosen[select.name] = select.value;
  sessionStorage.setItem(store, JSON.stringify(chosen));
});

function restoreMapping(root) {
  root.querySelectorAll?.(".mapping-fields select").forEach((select) => {
    const store = mappingStore(select);
    const value = store && readMapping(store)[select.name];
    if (value !== undefined && [...select.options].some((option) => option.value === value)) {
      select.value = value;
    }
  });
}
restoreMapping(document);
document.addEventListener("htmx:load", (event) => restoreMapping(event.detail.elt));

// "Add another criterion": with this script, a copy of the formset's empty form is added in
// place (its __prefix__ numbered, the form count raised) and its first field focused, with
// nothing sent; without it, the button shows the form again with one more.
document.addEventListener("click", (event) => {
  const button = event.target.closest?.("[data-add-form]");
  if (!button) {
    return;
  }
  const prefix = button.dataset.addForm;
  const form = button.form;
  const total = form?.querySelector(`[name="${CSS.escape(prefix)}-TOTAL_FORMS"]`);
  const empty = form?.querySelector(`template[data-empty-form="${CSS.escape(prefix)}"]`);
  const list = form?.querySelector(`[data-formset="${CSS.escape(prefix)}"]`);
  if (!total || !empty || !list) {
    return;
  }
  event.preventDefault();
  const index = Number(total.value);
  const added = document.createElement("div");
  added.innerHTML = empty.innerHTML.replaceAll("__prefix__", String(index));
  const fieldset = added.firstElementChild;
  list.append(fieldset);
  total.value = String(index + 1);
  fieldset.querySelectorAll("[data-verifier]").forEach(setUpVerifier);
  fieldset.querySelector("textarea")?.focus();
});
