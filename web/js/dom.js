// A tiny DOM builder: h("a", {href: "#/x"}, "text", child). Text is always a text node, never
// HTML, so nothing from the API or an event can inject markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") on(el, k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k in el && typeof v !== "string") el[k] = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
  }
  append(el, children);
  return el;
}

// Handlers set through h() live in el.__on and are reached through one listener per type, so
// updateNode() can hand an element that stays on the page the handler of its fresh copy (whose
// closure sees the fresh data).
function on(el, type, f) {
  if (!el.__on) el.__on = {};
  if (!el.__on[type]) el.addEventListener(type, (ev) => el.__on[type](ev));
  el.__on[type] = f;
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

// Replaces the children of `el` as replace() does, but in place: they are updated to match `children`:
// nodes that stay are kept and only their changed attributes, text and handlers are updated, so
// focus, text selection, an open <details> and what the user typed in a field survive a refresh.
// Elements are matched by key (data-id, data-name, data-destination or id) where they have one,
// else by position and tag.
export function replaceInPlace(el, ...children) {
  const next = [];
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    next.push(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  patchChildren(el, next);
  return el;
}

// Makes `old` (on the page) look like `fresh` (just built, not on the page), keeping `old`; a
// different tag or key replaces it. Returns the node now on the page.
export function updateNode(old, fresh) {
  if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName || keyOf(old) !== keyOf(fresh)) {
    old.replaceWith(fresh);
    return fresh;
  }
  if (old.nodeType === Node.TEXT_NODE) {
    if (old.data !== fresh.data) old.data = fresh.data;
    return old;
  }
  if (old.nodeType !== Node.ELEMENT_NODE) return old;
  for (const a of [...old.attributes]) {
    if (!fresh.hasAttribute(a.name) && !(a.name === "open" && old.tagName === "DETAILS")) old.removeAttribute(a.name);
  }
  for (const a of fresh.attributes) {
    if (a.name === "open" && old.tagName === "DETAILS") continue;  // the user's choice
    if (old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
  }
  if (fresh.style.cssText !== old.style.cssText) old.style.cssText = fresh.style.cssText;
  if (fresh.__on) for (const [type, f] of Object.entries(fresh.__on)) on(old, type, f);
  if ("disabled" in fresh && old.disabled !== fresh.disabled) old.disabled = fresh.disabled;
  // A field keeps what the user typed or chose: its value follows the fresh copy only while the
  // user has not changed it (its value is still the one it was given) and it is not focused.
  if (["INPUT", "SELECT", "TEXTAREA"].includes(old.tagName)) {
    const untouched = given(old) === fieldState(old);
    if (old.tagName !== "SELECT") {
      if (untouched && document.activeElement !== old) setFieldState(old, fieldState(fresh));
      return old;
    }
    const before = old.value;
    patchChildren(old, [...fresh.childNodes]);
    old.value = untouched && document.activeElement !== old ? fresh.value : before;
    old.__given = fieldState(fresh);
    return old;
  }
  patchChildren(old, [...fresh.childNodes]);
  return old;
}

// What the page last put in a field (its markup's value at first).
function given(el) {
  if (el.__given !== undefined) return el.__given;
  if (el.tagName === "SELECT") return el.value;  // not told apart from a choice before the first update
  return el.type === "checkbox" || el.type === "radio" ? String(el.defaultChecked) : el.defaultValue;
}
function fieldState(el) { return el.type === "checkbox" || el.type === "radio" ? String(el.checked) : el.value; }
function setFieldState(el, v) {
  if (el.type === "checkbox" || el.type === "radio") el.checked = v === "true"; else el.value = v;
  el.__given = v;
}

function keyOf(n) {
  if (n.nodeType !== Node.ELEMENT_NODE) return null;
  for (const a of ["data-id", "data-name", "data-destination", "id"]) {
    if (n.hasAttribute(a)) return `${a}=${n.getAttribute(a)}`;
  }
  return null;
}

function patchChildren(parent, next) {
  const old = [...parent.childNodes];
  const keyed = new Map();
  for (const o of old) if (keyOf(o) !== null) keyed.set(`${o.nodeName} ${keyOf(o)}`, o);
  const used = new Set();
  let pos = 0;  // the next unkeyed old node to match by position
  next.forEach((n, i) => {
    let match = null;
    const k = keyOf(n);
    if (k !== null) {
      const o = keyed.get(`${n.nodeName} ${k}`);
      if (o && !used.has(o)) match = o;
    } else {
      while (pos < old.length && (used.has(old[pos]) || keyOf(old[pos]) !== null)) pos += 1;
      if (pos < old.length && old[pos].nodeType === n.nodeType && old[pos].nodeName === n.nodeName) match = old[pos++];
    }
    let node = n;
    if (match) {
      used.add(match);
      node = updateNode(match, n);
    }
    const at = parent.childNodes[i];
    if (at !== node) parent.insertBefore(node, at || null);
  });
  for (const o of old) if (!used.has(o) && o.parentNode === parent) o.remove();
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
