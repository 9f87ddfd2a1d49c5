// bulk.js makes a list's "select all" box work: a checkbox with
// data-select-all="NAME" ticks or clears every checkbox named NAME of its
// form, and shows itself mixed when only some are ticked. Without scripts
// the box stays hidden and each row is ticked by hand.
export function selectAll(box) {
  const name = box.dataset.selectAll;
  const items = () => Array.from(box.form ? box.form.elements : []).filter(
    (el) => el !== box && el.type === "checkbox" && el.name === name);
  const sync = () => {
    const all = items();
    const on = all.filter((el) => el.checked).length;
    box.checked = all.length > 0 && on === all.length;
    box.indeterminate = on > 0 && on < all.length;
  };
  box.addEventListener("change", () => {
    for (const el of items()) el.checked = box.checked;
    sync();
  });
  for (const el of items()) el.addEventListener("change", sync);
  box.hidden = false;
  sync();
}
