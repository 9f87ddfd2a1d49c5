// live.js keeps a live page (<main data-live>) up to date: it listens to
// the console's server-sent events for the page (/console/live), and when
// they say the page changed, loads it again and puts its new main content
// in place — unless the person is busy in it (a box ticked, a field in
// use), then it offers the update instead. The pause button stops
// listening until pressed again; the choice lasts for the browser tab.
const PAUSED = "kobana-console-live-paused";

export function live(main, enhance) {
  const bar = document.getElementById("live-bar");
  if (!main || !bar || !main.hasAttribute("data-live") || typeof EventSource === "undefined") {
    return;
  }
  const status = document.getElementById("live-status");
  const toggle = document.getElementById("live-toggle");
  const show = document.getElementById("live-show");
  let source = null;
  let loading = false;

  const here = () => location.pathname + location.search;
  const say = (text) => { status.textContent = text; };

  function busy() {
    const a = document.activeElement;
    return (a && main.contains(a) && a.matches("input, select, textarea")) ||
      main.querySelector("input[type=checkbox]:checked") !== null;
  }

  function stop(text) {
    if (source) {
      source.close();
      source = null;
    }
    if (text) say(text);
  }

  function start() {
    stop();
    const u = "/console/live?path=" + encodeURIComponent(here()) + "&v=" + encodeURIComponent(main.dataset.version || "");
    source = new EventSource(u);
    source.addEventListener("changed", () => (busy() ? offer() : refresh()));
    source.addEventListener("ended", () => stop("Live updates ended: sign in again or reload the page."));
    say("Live: this page updates itself.");
  }

  function offer() {
    show.hidden = false;
    say("This page has changed; updates wait while you select or type.");
  }

  async function refresh() {
    if (loading) return;
    loading = true;
    try {
      const res = await fetch(here(), { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!res.ok || res.redirected) {
        stop("Live updates stopped: reload the page.");
        return;
      }
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const next = doc.getElementById("main");
      if (!next) return;
      const nodes = Array.from(next.childNodes);
      main.replaceChildren(...nodes.map((n) => document.importNode(n, true)));
      main.dataset.version = next.dataset.version || "";
      enhance(main);
      show.hidden = true;
      if (!next.hasAttribute("data-live")) {
        main.removeAttribute("data-live");
        stop("Finished: this page no longer changes.");
        toggle.hidden = true;
      } else if (source) {
        say("Live: updated at " + new Date().toLocaleTimeString() + ".");
      }
    } catch {
      stop("Live updates stopped: reload the page.");
    } finally {
      loading = false;
    }
  }

  function setPaused(paused) {
    toggle.setAttribute("aria-pressed", String(paused));
    toggle.textContent = paused ? "Resume updates" : "Pause updates";
    if (paused) {
      sessionStorage.setItem(PAUSED, "1");
      stop("Paused: this page does not update itself.");
    } else {
      sessionStorage.removeItem(PAUSED);
      start();
    }
  }

  toggle.addEventListener("click", () => setPaused(toggle.getAttribute("aria-pressed") !== "true"));
  show.addEventListener("click", refresh);
  bar.hidden = false;
  setPaused(sessionStorage.getItem(PAUSED) === "1");
}
