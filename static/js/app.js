// Opens and closes the app's <dialog> elements. The dialog's content comes from the server
// (htmx swaps it in); once htmx has settled and wired it, this opens it (showModal moves
// focus into it, and Escape closes it) and wires the close buttons.
document.addEventListener("htmx:afterSettle", (event) => {
  const dialog = event.detail.target.closest("dialog");
  if (dialog && !dialog.open) {
    dialog.showModal();
  }
});
document.addEventListener("click", (event) => {
  const closer = event.target.closest("[data-close-dialog]");
  if (closer) {
    event.preventDefault();
    closer.closest("dialog")?.close();
  }
  const menu = event.target.closest("details.menu a, details.menu button");
  if (menu) {
    menu.closest("details.menu").open = false;
  }
});
