// API tokens (admins without a scope only; docs/access.md): the list (role, scope, created when and
// by whom, expiry, last use and from where), a form that makes a token, scoped to some sources and
// destinations or not, and shows it this once (Copy, then "Done" removes it from the page: only its
// hash is kept), and revocation after a confirmation. The bootstrap token can be revoked only while
// another admin token exists: the server's 409 says so.
import { h, message, table, replace, replaceInPlace, copyButton } from "../dom.js";
import { get, post, del, enc } from "../api.js";
import { time } from "../format.js";
import { principal, scopeText, ROLES } from "../access.js";
import { refreshEvery, input, select } from "./common.js";

// What each role may do, under the role chosen.
const ROLE_TEXT = {
  viewer: "Looks at everything, changes nothing.",
  operator: "Also replays, cancels bulk replays, pauses, resumes and resets breakers.",
  admin: "Everything: sources, destinations, routes, secrets and tokens too.",
};

// "token:bootstrap" (an audit actor) → "bootstrap".
const actorName = (a) => a.replace(/^token:/, "");

function expiryCell(t) {
  if (t.revoked) return h("span", { class: "badge s-failed" }, "revoked");
  if (!t.expires_at) return h("span", { class: "muted" }, "never");
  return h("div", null, t.expired ? [h("span", { class: "badge s-failed" }, "expired"), " "] : null, time(t.expires_at));
}

function lastUsedCell(t) {
  if (!t.last_used_at) return h("span", { class: "muted" }, "never");
  return h("div", null, time(t.last_used_at), t.last_used_addr ? h("div", { class: "muted mono addr" }, `from ${t.last_used_addr}`) : null);
}

// A token's scope in the list: one line per kind, or a muted "all" for a token without one.
function scopeCell(t) {
  if (!t.scope) return h("span", { class: "muted" }, "all");
  const line = (kind, names) => h("div", null, h("span", { class: "muted" }, `${kind}: `),
    names?.length ? names.join(", ") : h("span", { class: "muted" }, "none"));
  return h("div", { class: "scope" }, line("sources", t.scope.sources), line("destinations", t.scope.destinations));
}

// "shop, stripe ,, shop" → ["shop", "stripe"].
const names = (text) => [...new Set(text.split(",").map((n) => n.trim()).filter(Boolean))];

function createdCell(t) {
  return h("div", null, time(t.created_at),
    h("div", { class: "muted" }, t.created_by ? `by ${actorName(t.created_by)}` : "at start-up"));
}

export async function render(main, ctx) {
  const me = principal();
  const status = h("div", { "aria-live": "polite", id: "tokens-status" });
  const wrap = h("div");

  // ---- the form; the new token replaces it until "Done"
  const nameField = input("t-name", "Name", { required: true, autocomplete: "off", spellcheck: "false", maxlength: 64, size: 20,
    placeholder: "ci-replays", "aria-describedby": "t-name-hint" });
  nameField.append(h("p", { class: "hint", id: "t-name-hint" }, "a-z 0-9 . _ -, up to 64"));
  const roleField = select("t-role", "Role", ROLES, "viewer", { "aria-describedby": "t-role-hint" });
  const roleHint = h("p", { class: "hint", id: "t-role-hint" }, ROLE_TEXT.viewer);
  roleField.append(roleHint);
  roleField.querySelector("select").addEventListener("change", (ev) => { roleHint.textContent = ROLE_TEXT[ev.target.value]; });
  const expiresField = input("t-expires", "Expires after", { autocomplete: "off", spellcheck: "false", size: 8, placeholder: "90d",
    "aria-describedby": "t-expires-hint" });
  expiresField.append(h("p", { class: "hint", id: "t-expires-hint" }, "1m to 3650d; blank: never"));
  // The scope (docs/access.md#scoped-tokens): names, comma-separated; both blank: no scope.
  const scopeAttrs = { autocomplete: "off", spellcheck: "false", size: 30, "aria-describedby": "t-scope-hint" };
  const sourcesField = input("t-sources", "Sources", { ...scopeAttrs, placeholder: "stripe, shop" });
  const destinationsField = input("t-destinations", "Destinations", { ...scopeAttrs, placeholder: "billing" });
  const scopeSet = h("fieldset", { class: "group token-scope" }, h("legend", null, "Scope (optional)"),
    h("div", { class: "token-fields" }, sourcesField, destinationsField),
    h("p", { class: "hint", id: "t-scope-hint" },
      "Names, separated by commas. Both blank: every source and destination; only one filled: none of the other kind. " +
      "A scoped token cannot manage tokens."));
  const fields = {
    name: nameField.querySelector("input"), role: roleField.querySelector("select"), expires: expiresField.querySelector("input"),
    sources: sourcesField.querySelector("input"), destinations: destinationsField.querySelector("input"),
  };
  const formStatus = h("div", { "aria-live": "polite", id: "t-form-status" });
  const form = h("form", { class: "token-form", novalidate: true, "aria-label": "New token" },
    h("div", { class: "token-fields" }, nameField, roleField, expiresField),
    scopeSet,
    h("div", { class: "token-submit" }, h("button", { type: "submit", class: "primary", id: "t-create" }, "Create token")),
    formStatus);
  const shownBox = h("div", { "aria-live": "polite" });
  const unmark = () => { for (const f of Object.values(fields)) f.removeAttribute("aria-invalid"); };
  // What was refused is forgotten once the fields change.
  form.addEventListener("input", () => { unmark(); replace(formStatus); });

  // The token, this once: Copy, and Done removes it from the page for good.
  const done = () => {
    replace(shownBox);
    form.hidden = false;
    fields.name.focus();
  };
  const shown = (t) => {
    const copy = copyButton(t.token, "Copy");
    copy.setAttribute("aria-label", `Copy the new token ${t.name}`);
    return h("div", { class: "secret-box", id: "new-token-box" },
      h("h3", { tabindex: "-1", class: "secret-heading" }, `New token ${t.name} (${t.role}${t.scope ? ", scoped" : ""})`),
      h("div", { class: "secret-value" }, h("code", { id: "new-token" }, t.token), copy),
      h("p", { id: "new-token-scope" }, t.scope ? `Scoped to ${scopeText(t.scope)}.` : "Not scoped: it reaches every source and destination."),
      h("p", null, h("strong", null, "Copy it now: it will not be shown again."), " ",
        t.expires_at ? ["It expires ", time(t.expires_at), ". "] : "It does not expire. ",
        "Use it as the bearer token of the API, as HOOKRELAY_TOKEN for the CLI, or to sign in here."),
      h("button", { type: "button", id: "new-token-done", onclick: done }, "Done"));
  };

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    unmark();
    replace(formStatus);
    const body = { name: fields.name.value.trim(), role: fields.role.value };
    if (fields.expires.value.trim()) body.expires = fields.expires.value.trim();
    const refuse = (text, field) => {
      replace(formStatus, message("error", text));
      field.setAttribute("aria-invalid", "true");
      field.focus();
    };
    if (!body.name) { refuse("Enter a name for the token.", fields.name); return; }
    // A scope only when a name is given; a field of commas alone is refused rather than read as
    // "no scope" (which would make a token that reaches everything).
    const scope = {};
    for (const kind of ["sources", "destinations"]) {
      const text = fields[kind].value.trim();
      if (text && !names(text).length) { refuse(`Enter ${kind} names separated by commas, or leave the field blank.`, fields[kind]); return; }
      if (text) scope[kind] = names(text);
    }
    if (Object.keys(scope).length) body.scope = scope;
    let t;
    try {
      t = await post("/tokens", body);
    } catch (e) {
      replace(formStatus, message("error", `Not created: ${e.message}`));
      // "scope.destinations[1]" → the Destinations field; "scope" → Sources.
      const field = /^scope\.(sources|destinations)\b/.exec(e.field || "")?.[1] || (e.field === "scope" ? "sources" : e.field);
      const bad = fields[field] || (e.status === 409 ? fields.name : null);
      if (bad) { bad.setAttribute("aria-invalid", "true"); bad.focus(); }
      return;
    }
    for (const f of ["name", "expires", "sources", "destinations"]) fields[f].value = "";
    form.hidden = true;
    replace(shownBox, shown(t));
    shownBox.querySelector(".secret-heading").focus();
    await load().catch(() => {});  // the next refresh shows what went wrong; the token stays shown
  });

  // ---- the list
  async function revoke(t) {
    const mine = me && t.name === me.name;
    const question = t.name === "bootstrap"
      ? "Revoke the bootstrap token? HOOKRELAY_TOKEN (or the token printed at the first start) is refused from then on, on every node, whatever the environment says. Only possible while another admin token exists."
      : `Revoke the token ${t.name}? Whatever uses it is refused at once (within a second on every node).`;
    if (!window.confirm(mine ? `${question} It is the token you are signed in with: this tab is signed out.` : question)) return;
    try {
      await del(`/tokens/${enc(t.name)}`);
    } catch (e) {
      replace(status, message("error", `Not revoked: ${e.message}`));
      return;
    }
    replace(status, message("ok", `Revoked the token ${t.name}.`));
    await load().catch(() => {});
  }

  async function load() {
    const r = await get("/tokens");
    replaceInPlace(wrap, r.items.length === 0 ? message("info", "No token yet.")
      : table(["Name", "Role", "Scope", "Created", "Expires", "Last used", ""], r.items.map((t) => h("tr", { dataset: { name: t.name } },
        h("td", null, h("div", null, h("span", { class: "mono" }, t.name),
          me && t.name === me.name ? h("span", { class: "muted" }, " (you)") : null)),
        h("td", null, h("span", { class: "chip" }, t.role)),
        h("td", { class: "scope-cell" }, scopeCell(t)),
        h("td", null, createdCell(t)),
        h("td", null, expiryCell(t)),
        h("td", null, lastUsedCell(t)),
        h("td", null, t.revoked ? h("span", { class: "muted" }, "—")
          : h("button", { type: "button", class: "danger", "aria-label": `Revoke token ${t.name}`, onclick: () => revoke(t) }, "Revoke")))),
      { label: "API tokens", stack: true }));
  }

  main.append(h("h1", null, "API tokens"),
    h("p", { class: "muted" }, "Who may use the API, the CLI and this dashboard, with which role, and on which sources and destinations. A token is shown once, when it is made: hookrelay keeps only its hash."),
    h("section", { class: "panel token-panel", "aria-labelledby": "new-token-heading" }, h("h2", { id: "new-token-heading" }, "New token"), form, shownBox),
    h("h2", null, "Tokens"), status, wrap);
  await load();
  return refreshEvery(5000, ctx, load, status);
}
