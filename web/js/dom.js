// A tiny DOM builder: h("a", {href: "#/x"}, "text", child). Text is always a text node, never
// HTML, so nothing from the API or an event can inject markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k in el && typeof v !== "string") el[k] = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// An SVG element (same calling convention; attributes only).
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replaces the children of `el` (null, undefined and false are left out, unlike replaceChildren).
export function replace(el, ...children) {
  clear(el);
  return append(el, children);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function message(kind, ...text) {
  return h("div", { class: `msg ${kind}`, role: kind === "error" ? "alert" : "status" }, ...text);
}

export function badge(status) {
  return h("span", { class: `badge s-${status}` }, String(status).replace("_", " "));
}

// A copy-to-clipboard button for `text` (falls back to selecting nothing: the text is shown).
export function copyButton(text, label = "Copy") {
  const b = h("button", { type: "button", class: "copy", "aria-label": `${label}: ${text}` }, label);
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = "Copied";
    } catch {
      b.textContent = "Select and copy";
    }
    setTimeout(() => { b.textContent = label; }, 1500);
  });
  return b;
}

// opts.label names the table; opts.stack stacks each row on a phone, its cells labelled with
// their column's header (.stack in app.css).
export function table(headers, rows, opts = {}) {
  if (opts.stack) {
    const names = headers.map((c) => (typeof c === "string" ? c : c.text));
    for (const tr of rows.flat()) [...tr.children].forEach((td, i) => td.setAttribute("data-label", names[i] || ""));
  }
  // Focusable, so a table wider than the screen can be scrolled with the keyboard.
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": opts.label || "Table" },
    h("table", { "aria-label": opts.label, class: opts.stack ? "stack" : null },
      h("thead", null, h("tr", null, headers.map((c) =>
        typeof c === "string" ? h("th", { scope: "col" }, c)
          : h("th", { scope: "col", class: c.class }, c.text)))),
      h("tbody", null, rows)));
}
