// console.js is the console's one entry module: it shows each
// <time datetime> of the page in the browser's own time zone (the server
// renders UTC, which stays when scripts are off), folds the JSON documents
// of the page (json.js), makes the lists' "select all" boxes work
// (bulk.js), and keeps a live page up to date (live.js), enhancing what
// each update brings the same way.
import { foldJSON } from "./json.js";
import { selectAll } from "./bulk.js";
import { live } from "./live.js";

const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

function enhance(root) {
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (!Number.isNaN(d.getTime())) {
      t.title = t.textContent;
      t.textContent = format.format(d);
    }
  }
  for (const pre of root.querySelectorAll("pre[data-json]")) {
    foldJSON(pre);
  }
  for (const box of root.querySelectorAll("input[type=checkbox][data-select-all]")) {
    selectAll(box);
  }
}

enhance(document);
live(document.getElementById("main"), enhance);
