// Who is signed in (GET /api/v1/whoami) and what their role and scope let them do: the one place
// the dashboard decides which actions it offers. The server decides for itself (a token whose role
// is not enough is answered 403 naming the role needed, docs/access.md); this table mirrors its
// route table (src/api/api_routes.cc) so that a viewer is not shown buttons that can only fail.
// A scoped token (docs/access.md#scoped-tokens) keeps its role's actions on what it reaches (the
// server filters its lists), but never manages tokens.
import { h } from "./dom.js";

// From least to most: each role may do all that the ones before it may.
export const ROLES = ["viewer", "operator", "admin"];

// Each action the dashboard offers, the role it needs, and how a sentence names it.
const ACTIONS = {
  replay: { role: "operator", what: "Replaying events" },             // POST /events/{id}/replay, POST /replays
  cancelReplay: { role: "operator", what: "Cancelling a bulk replay" }, // DELETE /replays/{id}
  pause: { role: "operator", what: "Pausing, resuming and resetting a breaker" }, // POST /destinations/{name}/pause|resume|reset-breaker
  editCatalog: { role: "admin", what: "Creating, editing and deleting sources, destinations and routes" },
  rotateSecret: { role: "admin", what: "Rotating a secret" },         // POST /{destinations,sources}/{name}/rotate-secret
  testTransform: { role: "admin", what: "Previewing a transform" },   // POST /transforms/test (it runs code)
  manageTokens: { role: "admin", what: "Managing API tokens", unscoped: true }, // /tokens (403 to a scoped token)
};

// {name, role, scope} of the token in this tab (scope: {sources, destinations} or null for none);
// null until whoami answered.
let me = null;

export function principal() { return me; }
export function setPrincipal(p) { me = p ? { name: p.name, role: p.role, scope: p.scope ?? null } : null; }

// "sources: shop, stripe · destinations: billing" (a list left out or empty: "none").
export function scopeText(scope) {
  const names = (l) => (l?.length ? l.join(", ") : "none");
  return `sources: ${names(scope.sources)} · destinations: ${names(scope.destinations)}`;
}

function rank(role) { return ROLES.indexOf(role); }

// Whether the signed-in token may do `action` (a key of ACTIONS). False while nobody is known.
export function can(action) {
  const a = ACTIONS[action];
  if (!a) throw new Error(`access.js: unknown action ${action}`);
  return !!me && rank(me.role) >= 0 && rank(me.role) >= rank(a.role) && !(a.unscoped && me.scope);
}

// The role `action` needs.
export function needs(action) { return ACTIONS[action].role; }

// "Replaying events needs the operator role; you are signed in as dash, a viewer."
// "Managing API tokens needs an admin token without a scope; you are signed in as team, a scoped admin."
export function whyNot(action) {
  const a = ACTIONS[action];
  if (a.unscoped && me?.scope) {
    return `${a.what} needs ${article(a.role)} ${a.role} token without a scope; you are signed in as ${me.name}, a scoped ${me.role}.`;
  }
  const who = me ? `; you are signed in as ${me.name}, ${article(me.role)} ${me.role}` : "";
  return `${a.what} needs the ${a.role} role${who}.`;
}

function article(word) { return /^[aeiou]/.test(word) ? "an" : "a"; }

// A muted note in place of what `action` would have shown (an edit form, a page of its own).
export function roleNote(action, id) {
  return h("p", { class: "muted role-note", id }, whyNot(action));
}
