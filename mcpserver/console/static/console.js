// console.js is the console's one entry module: it shows each
// <time datetime> of the page in the browser's own time zone (the server
// renders UTC, which stays when scripts are off) and folds the JSON
// documents of the page (json.js).
import { foldJSON } from "./json.js";

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
