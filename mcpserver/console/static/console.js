// console.js is the console's one entry module: it shows each
// <time datetime> of the page in the browser's own time zone (the server
// renders UTC, which stays when scripts are off) and folds the JSON
// documents of the page (json.js) and makes the lists' "select all"
// boxes work (bulk.js).
import { foldJSON } from "./json.js";
import { selectAll } from "./bulk.js";

const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
for (const t of document.querySelectorAll("time[datetime]")) {
  const d = new Date(t.getAttribute("datetime"));
  if (!Number.isNaN(d.getTime())) {
    t.title = t.textContent;
    t.textContent = format.format(d);
  }
}
for (const pre of document.querySelectorAll("pre[data-json]")) {
  foldJSON(pre);
}
for (const box of document.querySelectorAll("input[type=checkbox][data-select-all]")) {
  selectAll(box);
}
