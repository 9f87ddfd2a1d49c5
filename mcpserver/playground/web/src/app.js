// The playground page: a CodeMirror 6 editor for a workflow document, the
// project's language server (package lsp, compiled to WebAssembly) for
// diagnostics, quick fixes, completion and hover, and the dry run (package
// plan) of the document against a sample e-mail. Everything runs in the
// page: after the module is loaded, nothing goes to a server.

import {EditorView, basicSetup} from "codemirror";
import {EditorState, Compartment} from "@codemirror/state";
import {keymap, ViewPlugin} from "@codemirror/view";
import {json} from "@codemirror/lang-json";
import {setDiagnostics, lintGutter, openLintPanel} from "@codemirror/lint";
import {LSPClient, LSPPlugin, serverCompletion, hoverTooltips, jumpToDefinitionKeymap} from "@codemirror/lsp-client";

// The virtual workspace the language server sees: the document, its
// example responses (W.responses.json beside W.json) and the secret names
// file (.kobana-secrets), which the server reads as files.
const DIR = "/playground";
const DOC_PATH = DIR + "/workflow.json";
const DOC_URI = "file://" + DOC_PATH;
const files = new Map(); // path -> {data: Uint8Array, mtime: number}
let clock = 1;

function setFile(path, text) {
  if (text == null || text.trim() === "") {
    files.delete(path);
    return;
  }
  files.set(path, {data: new TextEncoder().encode(text), mtime: ++clock});
}

// installFS gives the Go runtime a read-only file system over `files`
// (wasm_exec.js keeps an fs that is already defined). Writes to standard
// output and error go to the console.
function installFS() {
  const err = (code) => Object.assign(new Error(code), {code});
  const open = new Map(); // fd -> path
  let nextFD = 100;
  const stat = (path) => {
    const f = files.get(path);
    const dir = path === DIR || path === "/";
    if (!f && !dir) return null;
    const size = f ? f.data.length : 0;
    const mtime = f ? f.mtime * 1000 : 0;
    return {dev: 1, ino: 1, mode: dir ? 0o40555 : 0o100444, nlink: 1, uid: 0, gid: 0, rdev: 0, size,
      blksize: 4096, blocks: Math.ceil(size / 512), atimeMs: mtime, mtimeMs: mtime, ctimeMs: mtime,
      isDirectory: () => dir};
  };
  const decoder = new TextDecoder();
  let line = "";
  globalThis.fs = {
    constants: {O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_TRUNC: 512, O_APPEND: 1024, O_EXCL: 128, O_DIRECTORY: 65536},
    writeSync(fd, buf) {
      line += decoder.decode(buf);
      const nl = line.lastIndexOf("\n");
      if (nl !== -1) {
        console.log(line.slice(0, nl));
        line = line.slice(nl + 1);
      }
      return buf.length;
    },
    write(fd, buf, offset, length, position, callback) {
      if (offset !== 0 || length !== buf.length || position !== null || (fd !== 1 && fd !== 2)) {
        callback(err("EBADF"));
        return;
      }
      callback(null, this.writeSync(fd, buf));
    },
    open(path, flags, mode, callback) {
      if (flags & 3) return callback(err("EROFS"));
      if (!stat(path)) return callback(err("ENOENT"));
      const fd = nextFD++;
      open.set(fd, {path, pos: 0});
      callback(null, fd);
    },
    close(fd, callback) { open.delete(fd); callback(null); },
    stat(path, callback) { const s = stat(path); s ? callback(null, s) : callback(err("ENOENT")); },
    lstat(path, callback) { this.stat(path, callback); },
    fstat(fd, callback) {
      const o = open.get(fd);
      const s = o && stat(o.path);
      s ? callback(null, s) : callback(err("EBADF"));
    },
    read(fd, buffer, offset, length, position, callback) {
      const o = open.get(fd);
      const f = o && files.get(o.path);
      if (!f) return callback(err("EBADF"));
      const at = position == null ? o.pos : position;
      const chunk = f.data.subarray(at, at + length);
      buffer.set(chunk, offset);
      if (position == null) o.pos += chunk.length;
      callback(null, chunk.length);
    },
    readdir(path, callback) { callback(err("ENOSYS")); },
  };
  for (const name of ["chmod", "chown", "fchmod", "fchown", "fsync", "ftruncate", "lchown", "link", "mkdir", "readlink", "rename", "rmdir", "symlink", "truncate", "unlink", "utimes"]) {
    globalThis.fs[name] = (...args) => args[args.length - 1](err("EROFS"));
  }
}

// loadModule fetches and starts the WebAssembly module.
async function loadModule() {
  installFS();
  const ready = new Promise((resolve) => { globalThis.kobanaReady = resolve; });
  const go = new Go();
  const resp = await fetch("playground.wasm");
  if (!resp.ok) throw new Error((await resp.text()) || `playground.wasm: HTTP ${resp.status}`);
  const {instance} = await WebAssembly.instantiateStreaming(resp, go.importObject);
  go.run(instance);
  await ready;
  return globalThis.kobana;
}

// transport speaks to the language server inside the module. Its answers
// arrive during send; they are handed on in a microtask, as from a socket.
function transport(kobana) {
  const handlers = new Set();
  kobana.lspListen((msg) => queueMicrotask(() => { for (const h of handlers) h(msg); }));
  return {
    send(message) { kobana.lspSend(message); },
    subscribe(h) { handlers.add(h); },
    unsubscribe(h) { handlers.delete(h); },
  };
}

const severities = {1: "error", 2: "warning", 3: "info", 4: "hint"};

// diagnosticsWithFixes shows the server's diagnostics and, for those with a
// suggested spelling, a quick fix: the server's own code action, asked for
// when the fix is applied.
function diagnosticsWithFixes() {
  const sync = ViewPlugin.fromClass(class {
    constructor() { this.pending = -1; }
    update(u) {
      if (!u.docChanged) return;
      if (this.pending > -1) clearTimeout(this.pending);
      // No round trip leaves the page: a short pause only lets typing settle.
      this.pending = setTimeout(() => {
        this.pending = -1;
        const plugin = LSPPlugin.get(u.view);
        if (plugin) plugin.client.sync();
      }, 40);
    }
    destroy() { if (this.pending > -1) clearTimeout(this.pending); }
  });
  return {
    clientCapabilities: {textDocument: {publishDiagnostics: {versionSupport: true}, codeAction: {codeActionLiteralSupport: {codeActionKind: {valueSet: ["quickfix"]}}}}},
    notificationHandlers: {
      "textDocument/publishDiagnostics": (client, params) => {
        const file = client.workspace.getFile(params.uri);
        if (!file || (params.version != null && params.version !== file.version)) return false;
        const view = file.getView();
        const plugin = view && LSPPlugin.get(view);
        if (!view || !plugin) return false;
        const pos = (p) => plugin.unsyncedChanges.mapPos(plugin.fromPosition(p, plugin.syncedDoc));
        view.dispatch(setDiagnostics(view.state, params.diagnostics.map((d) => ({
          from: pos(d.range.start),
          to: pos(d.range.end),
          severity: severities[d.severity || 1],
          source: d.code ? `kobana ${d.code}` : "kobana",
          message: d.message,
          actions: d.data && d.data.suggestion ? [{
            name: `Change to ${d.data.suggestion}`,
            apply: (view) => applyQuickFix(view, d),
          }] : [],
        }))));
        document.dispatchEvent(new CustomEvent("kobana-diagnostics", {detail: params.diagnostics}));
        return true;
      },
    },
    editorExtension: [sync, lintGutter()],
  };
}

async function applyQuickFix(view, diagnostic) {
  const plugin = LSPPlugin.get(view);
  if (!plugin) return;
  plugin.client.sync();
  const actions = await plugin.client.request("textDocument/codeAction", {
    textDocument: {uri: plugin.uri},
    range: diagnostic.range,
    context: {diagnostics: [diagnostic], only: ["quickfix"]},
  });
  const action = (actions || []).find((a) => a.edit);
  if (!action) return;
  let edits = action.edit.changes ? action.edit.changes[plugin.uri] : null;
  if (!edits && action.edit.documentChanges) edits = action.edit.documentChanges.flatMap((c) => c.edits || []);
  if (!edits || !edits.length) return;
  view.dispatch({
    changes: edits.map((e) => ({
      from: plugin.unsyncedChanges.mapPos(plugin.fromPosition(e.range.start, plugin.syncedDoc)),
      to: plugin.unsyncedChanges.mapPos(plugin.fromPosition(e.range.end, plugin.syncedDoc)),
      insert: e.newText,
    })),
    userEvent: "input.quickfix",
  });
}

// ---- The plan pane ----

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children.flat()) if (c != null) e.append(c);
  return e;
};

const outcomeWords = {send: "would be sent", fail: "would fail before sending", skip: "would be skipped"};
const plural = (n, w) => `${n} ${w}${n === 1 ? "" : "s"}`;

function renderBody(b) {
  if (!b) return el("div", {class: "body none"}, "no body");
  let size = plural(b.size, "byte");
  if (b.unknown && b.unknown.length) size += " + the length of " + b.unknown.join(", ");
  if (b.kind === "json") {
    return el("div", {class: "body"}, el("div", {class: "what"}, `JSON body, ${size}`),
      el("pre", {}, JSON.stringify(b.json, null, 2)));
  }
  if (b.kind === "text") {
    return el("div", {class: "body"}, el("div", {class: "what"}, `text body, ${size}`), el("pre", {}, b.text));
  }
  return el("div", {class: "body"}, el("div", {class: "what"}, `multipart/form-data, ${plural(b.parts.length, "part")}, ${size}`),
    el("table", {class: "parts"}, b.parts.map((p) => el("tr", {"data-part": p.name},
      el("td", {class: "name"}, p.name),
      el("td", {}, p.file ? (p.file.known ? `file: attachment ${p.file.attachment}, ${p.file.filename} (${p.file.content_type})` : `file: attachment ${p.file.attachment} (no e-mail)`) : JSON.stringify(p.value)),
      el("td", {class: "size"}, p.file && !p.file.known ? "?" : plural(p.size, "byte"))))));
}

function renderStep(s) {
  const head = el("div", {class: "head"},
    el("span", {class: "index"}, `step ${s.index}`),
    s.label ? el("span", {class: "label"}, s.label) : null,
    el("span", {class: `badge ${s.outcome}`}, outcomeWords[s.outcome] + (s.outcome !== "send" && s.reason ? ` [${s.reason}]` : "")));
  const parts = [head];
  if (s.outcome !== "send" && s.message) parts.push(el("div", {class: "message"}, s.message));
  const r = s.request;
  if (r) {
    parts.push(el("div", {class: "line request"}, el("b", {}, r.method), " ", el("span", {class: "url"}, r.url)));
    if (r.headers.length) parts.push(el("table", {class: "headers"}, r.headers.map((h) => el("tr", {}, el("td", {class: "name"}, h.name + ":"), el("td", {}, h.value)))));
    parts.push(renderBody(r.body));
    if (r.host.check !== "denied") parts.push(el("div", {class: `guard ${r.host.check}`}, r.host.check === "allowed" ? `guard: ${r.host.name} is allowed` : `guard: ${r.host.message}`));
  }
  const notes = [];
  if (s.depends_on && s.depends_on.length) notes.push(`uses the response of step ${s.depends_on.join(", ")}`);
  if (s.outcome === "send") {
    const want = s.expected_status ? `status ${s.expected_status}` : "any 2xx status";
    notes.push(s.example ? (s.example.succeeds ? `expects ${want}; the example response has status ${s.example.status}` : s.message) : `expects ${want}`);
  }
  if (s.unknown && s.unknown.length) notes.push(`known when the step runs: ${s.unknown.join(", ")}`);
  for (const n of notes) parts.push(el("div", {class: "note"}, n));
  return el("section", {class: `step ${s.outcome}`, "data-index": String(s.index), "data-outcome": s.outcome}, parts);
}

function renderPlan(container, res) {
  container.replaceChildren();
  const p = res.plan;
  for (const problem of res.problems || []) container.append(el("div", {class: "problem"}, problem));
  if (!p) return;
  if (!p.valid) {
    container.append(el("div", {class: "summary invalid", "data-valid": "false"}, "the document does not validate: nothing would be sent"));
    container.append(el("ul", {class: "diagnostics"}, p.diagnostics.filter((d) => d.severity === "error").map((d) =>
      el("li", {}, `${d.range.start.line}:${d.range.start.column} ${d.message} [${d.code}]`))));
    return;
  }
  if (!p.steps.length) {
    container.append(el("div", {class: "summary", "data-valid": "true"}, "the document has no workflow: nothing would be sent"));
    return;
  }
  const s = p.summary;
  container.append(el("div", {class: "summary", "data-valid": "true"},
    `${plural(p.steps.length, "step")}: ${s.send} would be sent, ${s.fail} would fail before sending, ${s.skip} would be skipped`));
  for (const step of p.steps) container.append(renderStep(step));
}

// ---- The page ----

async function main() {
  const status = document.getElementById("status");
  let kobana;
  try {
    kobana = await loadModule();
  } catch (e) {
    status.textContent = "The playground's module could not be loaded: " + e.message;
    status.className = "status failed";
    document.body.dataset.state = "failed";
    return;
  }
  const samples = JSON.parse(kobana.samples());
  const sampleEmail = kobana.sampleEmail();
  const inputs = {
    names: document.getElementById("secret-names"),
    facts: document.getElementById("facts"),
    responses: document.getElementById("responses"),
    now: document.getElementById("now"),
    emlFile: document.getElementById("eml-file"),
    emlName: document.getElementById("eml-name"),
    useEml: document.getElementById("use-eml"),
    sample: document.getElementById("sample"),
  };
  let eml = sampleEmail.data;
  inputs.emlName.textContent = sampleEmail.name;
  for (const s of samples) inputs.sample.append(el("option", {value: s.name}, s.title));

  const planPane = document.getElementById("plan");
  const planText = document.getElementById("plan-text");
  let planTimer = -1;
  let view;
  const syncFiles = () => {
    setFile(DIR + "/workflow.responses.json", inputs.responses.value);
    setFile(DIR + "/.kobana-secrets", inputs.names.value);
  };
  const replan = () => {
    planTimer = -1;
    syncFiles();
    const t0 = performance.now();
    const res = JSON.parse(kobana.plan(view.state.doc.toString(), JSON.stringify({
      secret_names: inputs.names.value, facts: inputs.facts.value, responses: inputs.responses.value, now: inputs.now.value,
    }), inputs.useEml.checked ? eml : null));
    const ms = performance.now() - t0;
    renderPlan(planPane, res);
    planText.textContent = res.text || "";
    status.textContent = `planned in ${ms.toFixed(1)} ms, in this page`;
    status.className = "status";
    document.body.dataset.state = "ready";
    document.body.dataset.plans = String(Number(document.body.dataset.plans || 0) + 1);
  };
  const schedulePlan = () => {
    if (planTimer > -1) clearTimeout(planTimer);
    planTimer = setTimeout(replan, 60);
  };

  const client = new LSPClient({
    rootUri: "file://" + DIR,
    timeout: 5000,
    extensions: [diagnosticsWithFixes()],
  }).connect(transport(kobana));

  const loadSample = (s) => {
    inputs.names.value = s.secret_names || "";
    inputs.facts.value = s.facts || "";
    inputs.responses.value = s.responses || "";
    syncFiles();
    if (view) view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: s.document}});
  };
  loadSample(samples[0]);
  view = new EditorView({
    parent: document.getElementById("editor"),
    state: EditorState.create({
      doc: samples[0].document,
      extensions: [
        basicSetup,
        json(),
        client.plugin(DOC_URI, "json"),
        serverCompletion({override: true}),
        hoverTooltips(),
        keymap.of(jumpToDefinitionKeymap),
        EditorView.updateListener.of((u) => { if (u.docChanged) schedulePlan(); }),
        EditorView.lineWrapping,
      ],
    }),
  });
  globalThis.playground = {view, kobana, replan};
  inputs.sample.addEventListener("change", () => loadSample(samples.find((s) => s.name === inputs.sample.value)));
  for (const input of [inputs.names, inputs.facts, inputs.responses, inputs.now, inputs.useEml]) {
    input.addEventListener("input", () => {
      // The server reads the files again when they change: republish.
      syncFiles();
      client.sync();
      schedulePlan();
    });
  }
  inputs.emlFile.addEventListener("change", async () => {
    const f = inputs.emlFile.files[0];
    if (!f) return;
    eml = new Uint8Array(await f.arrayBuffer());
    inputs.emlName.textContent = f.name + " (read in this page, never uploaded)";
    inputs.useEml.checked = true;
    schedulePlan();
  });
  document.getElementById("show-problems").addEventListener("click", () => openLintPanel(view));
  document.getElementById("measure").addEventListener("click", () => measure(kobana, view.state.doc.toString()));
  replan();
}

// measure times the compiler on the current document in this page: calls
// from JavaScript (each crossing into the module) and a loop inside it.
function measure(kobana, doc) {
  const out = document.getElementById("measurement");
  const n = 2000;
  for (let i = 0; i < 50; i++) kobana.compileLoop(doc, 1); // warm up
  let t0 = performance.now();
  for (let i = 0; i < n; i++) kobana.compileLoop(doc, 1);
  const perCall = (performance.now() - t0) / n;
  t0 = performance.now();
  kobana.compileLoop(doc, n);
  const inLoop = (performance.now() - t0) / n;
  const result = {iterations: n, per_call_us: Math.round(perCall * 1000 * 10) / 10, in_module_us: Math.round(inLoop * 1000 * 10) / 10, bytes: doc.length};
  out.textContent = `compile: ${result.per_call_us} µs per call from JavaScript, ${result.in_module_us} µs per compile inside the module (${n} iterations, ${doc.length} bytes)`;
  out.dataset.result = JSON.stringify(result);
  return result;
}

main();
