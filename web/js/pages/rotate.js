// The "Rotate secret" panel of a destination's page (its signing secret) and of a source's (its
// verification secrets): a grace period (and, for a source, the new secret: a provider that makes
// its own secret needs it typed in), a confirmation, then the new secret shown this once, until
// "Done" (or leaving the page) removes it. Both POST {grace, secret} to a rotate-secret endpoint
// (api.md) that answers with the object as rotated plus the new secret; only the words differ.
import { h, message, replace, updateNode, copyButton, clear } from "../dom.js";
import { post } from "../api.js";
import { time } from "../format.js";
import { input } from "./common.js";

// The verbs of what a previous secret still does during the grace period, for one and for several.
export const SIGNS = { one: "signs", many: "sign" };
export const VERIFIES = { one: "verifies", many: "verify" };

// "previous secret also signs", "2 previous secrets also verify": what the `n` previous secrets
// still do during the grace period (verb: SIGNS, VERIFIES).
export function previousAlso(verb, n) {
  return n > 1 ? `${n} previous secrets also ${verb.many}` : `previous secret also ${verb.one}`;
}

// "rotating: the previous secret also signs until 14:05:31 (in 24 h)", the time shown like every
// other.
export function rotatingUntil(verb, n, iso) {
  return [`rotating: the ${previousAlso(verb, n)} until `, time(iso)];
}

// True for a grace period of zero ("0s", "0", "0h"…): the old secret stops at once.
export function noGrace(g) {
  return /^0+(ms|s|m|h|d)?$/.test(g);
}

// Built once per page, so the page's refreshes leave it alone; update(x) follows the object as
// last shown (x is the API's destination or source).
// opts:
//   name, noun            the object's name; what is rotated ("signing secret")
//   verb                  what the previous secret does meanwhile (SIGNS, VERIFIES)
//   path                  the endpoint under /api/v1 (POST)
//   answerSecret          the answer's field holding the new secret
//   hint(x)               what rotating does, above the fields
//   secretField           optional {hint(x), required(x)}: a field for the new secret (blank: the
//                         server generates one); without it the server always generates it
//   question(x, grace)    the confirmation (grace as typed; "" means the default, 24h)
//   outcome(fresh, x, generated)  what the receiver or sender has to do, and by when (x: before)
//   afterRotate(fresh)    refreshes the page with the object as the rotation left it
export function rotatePanel(opts) {
  const { name, noun } = opts;
  let current = null;  // the object as last shown
  const hint = () => h("p", { id: "rotate-hint", class: "muted" }, opts.hint(current));
  const graceField = input("r-grace", "Grace period", { value: "24h", size: 8, autocomplete: "off" },
    `How long the previous secret also ${opts.verb.one}: 0s (it stops at once) to 7d`);
  const grace = graceField.querySelector("input");
  const secretHint = () => h("p", { class: "hint", id: "r-secret-hint" }, opts.secretField.hint(current));
  const secretField = opts.secretField
    ? h("div", { class: "field" }, h("label", { for: "r-secret" }, "New secret"),
      h("input", { id: "r-secret", name: "r-secret", type: "password", autocomplete: "new-password", size: 40, "aria-describedby": "r-secret-hint" }),
      secretHint())
    : null;
  const secret = secretField?.querySelector("input");
  const fields = { grace, secret };
  const where = h("div", { "aria-live": "polite" });
  // The hint is the form's: it goes with it while a new secret is shown.
  const form = h("form", { novalidate: true, "aria-label": `Rotate the ${noun} of ${name}` }, hint(), graceField, secretField,
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Rotate now"),
      h("button", { type: "button", onclick: () => close() }, "Cancel")));
  const panel = h("section", { id: "rotate", class: "panel", hidden: true, "aria-labelledby": "rotate-heading" },
    h("h2", { id: "rotate-heading" }, `Rotate the ${noun}`), form, where);
  const opener = () => document.getElementById("rotate-open");
  const unmark = () => { for (const f of [grace, secret]) f?.removeAttribute("aria-invalid"); };
  const open = () => {
    panel.hidden = false;
    opener()?.setAttribute("aria-expanded", "true");
    grace.focus();
  };
  // Closing removes a secret shown (it is never shown again), one typed, and any error.
  const close = () => {
    panel.hidden = true;
    clear(where);
    form.hidden = false;
    if (secret) secret.value = "";
    unmark();
    opener()?.setAttribute("aria-expanded", "false");
    opener()?.focus();
  };
  // The outcome: a generated secret shown with Copy; a typed one is not shown again.
  const shown = (value, fresh, before, generated) => {
    const copy = generated ? copyButton(value, "Copy") : null;
    copy?.setAttribute("aria-label", `Copy the new ${noun}`);
    return h("div", { class: "secret-box" },
      h("h3", { tabindex: "-1", class: "secret-heading" }, generated ? `New ${noun} of ${name}` : `Rotated the ${noun} of ${name}`),
      generated ? h("div", { class: "secret-value" }, h("code", { id: "new-secret" }, value), copy) : null,
      h("p", null, generated ? [h("strong", null, "Copy it now: it will not be shown again."), " "] : null,
        opts.outcome(fresh, before, generated)),
      h("button", { type: "button", onclick: () => close() }, "Done"));
  };
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const g = grace.value.trim();
    const typed = secret?.value.trim() ?? "";
    const before = current;
    if (!window.confirm(opts.question(before, g))) return;
    unmark();
    let fresh;
    let value;
    try {
      const body = {};
      if (g) body.grace = g;
      if (typed) body.secret = typed;
      ({ [opts.answerSecret]: value, ...fresh } = await post(opts.path, body));
    } catch (e) {
      replace(where, message("error", `Not rotated: ${e.message}`));
      const bad = fields[e.field];
      if (bad) { bad.setAttribute("aria-invalid", "true"); bad.focus(); }
      return;
    }
    form.hidden = true;
    if (secret) secret.value = "";
    replace(where, shown(value, fresh, before, !typed));
    where.querySelector(".secret-heading").focus();
    try {
      await opts.afterRotate(fresh);
    } catch {
      // The next refresh shows what went wrong; the secret stays shown.
    }
  });
  return {
    panel,
    isOpen: () => !panel.hidden,
    toggle: () => (panel.hidden ? open() : close()),
    update(x) {
      current = x;
      updateNode(panel.querySelector("#rotate-hint"), hint());
      if (!secret) return;
      updateNode(panel.querySelector("#r-secret-hint"), secretHint());
      secret.required = !!opts.secretField.required(x);
    },
  };
}

// The page's "Rotate secret" button, which opens and closes `rotation`'s panel.
export function rotateButton(rotation) {
  return h("button", { type: "button", id: "rotate-open", "aria-controls": "rotate", "aria-expanded": String(rotation.isOpen()),
    onclick: () => rotation.toggle() }, "Rotate secret");
}
