// json.js folds a JSON document shown in a <pre data-json>: every object
// and array becomes a <details> that opens and closes (by keyboard too),
// numbers are shown as they were written — never through a float, so a
// large one stays exact — and a button copies the document as it was.
// Everything is set as text, never as markup.

export function foldJSON(pre) {
  const text = pre.textContent;
  let doc;
  try {
    doc = parse(text);
  } catch {
    return; // not JSON: shown as it is
  }
  const tree = document.createElement("div");
  tree.className = "json-tree";
  tree.append(render(doc, 0));
  const copy = document.createElement("button");
  copy.type = "button";
  copy.textContent = "Copy JSON";
  copy.addEventListener("click", () => navigator.clipboard.writeText(text));
  pre.replaceChildren(copy, tree);
}

const stringToken = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const literalToken = /true|false|null/y;

// parse reads JSON into {object: [[key, value]…]}, {array: […]} and
// {scalar: lexeme, kind} nodes, keeping each scalar's text.
function parse(s) {
  let i = 0;
  const space = () => {
    while (i < s.length && " \t\n\r".includes(s[i])) i++;
  };
  const token = (re, kind) => {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) throw new SyntaxError("JSON: unexpected text at " + i);
    i = re.lastIndex;
    return { scalar: m[0], kind };
  };
  const expect = (c) => {
    space();
    if (s[i] !== c) throw new SyntaxError("JSON: expected " + c + " at " + i);
    i++;
  };
  const value = () => {
    space();
    const c = s[i];
    if (c === "{" || c === "[") {
      const object = c === "{";
      const close = object ? "}" : "]";
      const items = [];
      i++;
      space();
      if (s[i] === close) {
        i++;
        return object ? { object: items } : { array: items };
      }
      for (;;) {
        if (object) {
          space();
          const key = JSON.parse(token(stringToken, "string").scalar);
          expect(":");
          items.push([key, value()]);
        } else {
          items.push(value());
        }
        space();
        if (s[i] === ",") {
          i++;
          continue;
        }
        expect(close);
        return object ? { object: items } : { array: items };
      }
    }
    if (c === '"') return token(stringToken, "string");
    if (c === "t" || c === "f" || c === "n") return token(literalToken, "literal");
    return token(numberToken, "number");
  };
  const doc = value();
  space();
  if (i !== s.length) throw new SyntaxError("JSON: text after the value at " + i);
  return doc;
}

function render(node, depth) {
  if (node.scalar !== undefined) {
    const span = document.createElement("span");
    span.className = "json-" + node.kind;
    span.textContent = node.scalar;
    return span;
  }
  const object = node.object !== undefined;
  const items = object ? node.object : node.array;
  if (items.length === 0) {
    const span = document.createElement("span");
    span.textContent = object ? "{}" : "[]";
    return span;
  }
  const details = document.createElement("details");
  details.open = depth < 3;
  const summary = document.createElement("summary");
  summary.textContent = object ? `{ ${items.length} ${items.length === 1 ? "key" : "keys"} }` : `[ ${items.length} ${items.length === 1 ? "item" : "items"} ]`;
  details.append(summary);
  for (const item of items) {
    const row = document.createElement("div");
    if (object) {
      const key = document.createElement("span");
      key.className = "json-key";
      key.textContent = JSON.stringify(item[0]) + ": ";
      row.append(key, render(item[1], depth + 1));
    } else {
      row.append(render(item, depth + 1));
    }
    details.append(row);
  }
  return details;
}
