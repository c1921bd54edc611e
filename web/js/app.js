// The dashboard's shell: sign-in, who is signed in with what role, navigation, and the hash
// router (/ui/#/events/01J…). Every page is a module exporting `render(main, ctx)`; it may return a
// cleanup function (timers). A page (or view) that needs more than viewing names its action
// (access.js); a role without it gets a note instead of a page whose every request would be refused.
import { h, clear, message, replace } from "./dom.js";
import { get, setToken, clearToken, token, setUnauthenticatedHandler, ApiError } from "./api.js";
import { principal, setPrincipal, can, whyNot, scopeText } from "./access.js";
import { refreshTimes, withTimes } from "./format.js";
import * as overview from "./pages/overview.js";
import * as events from "./pages/events.js";
import * as eventDetail from "./pages/event.js";
import * as destinations from "./pages/destinations.js";
import * as sources from "./pages/sources.js";
import * as routes from "./pages/routes.js";
import * as replays from "./pages/replays.js";
import * as audit from "./pages/audit.js";
import * as tokens from "./pages/tokens.js";

const pages = [
  { re: /^\/?$/, page: overview, nav: "#/", title: "Overview" },
  { re: /^\/events$/, page: events, nav: "#/events", title: "Events" },
  { re: /^\/events\/([^/]+)$/, page: eventDetail, nav: "#/events", title: "Event" },
  { re: /^\/destinations$/, page: destinations, nav: "#/destinations", title: "Destinations", view: "list" },
  { re: /^\/destinations\/\+new$/, page: destinations, nav: "#/destinations", title: "New destination", view: "new", needs: "editCatalog" },
  { re: /^\/destinations\/([^/]+)$/, page: destinations, nav: "#/destinations", title: "Destination", view: "detail" },
  { re: /^\/sources$/, page: sources, nav: "#/sources", title: "Sources", view: "list" },
  { re: /^\/sources\/\+new$/, page: sources, nav: "#/sources", title: "New source", view: "new", needs: "editCatalog" },
  { re: /^\/sources\/([^/]+)$/, page: sources, nav: "#/sources", title: "Source", view: "detail" },
  { re: /^\/routes$/, page: routes, nav: "#/routes", title: "Routes", view: "list" },
  { re: /^\/routes\/\+new$/, page: routes, nav: "#/routes", title: "New route", view: "new", needs: "editCatalog" },
  { re: /^\/routes\/([^/]+)$/, page: routes, nav: "#/routes", title: "Route", view: "detail" },
  { re: /^\/replays$/, page: replays, nav: "#/replays", title: "Bulk replays", view: "list" },
  { re: /^\/replays\/new$/, page: replays, nav: "#/replays", title: "New bulk replay", view: "new", needs: "replay" },
  { re: /^\/replays\/([^/]+)$/, page: replays, nav: "#/replays", title: "Bulk replay", view: "detail" },
  { re: /^\/audit$/, page: audit, nav: "#/audit", title: "Audit trail" },
  { re: /^\/tokens$/, page: tokens, nav: "#/tokens", title: "API tokens", needs: "manageTokens" },
];

const main = document.getElementById("main");
const top = document.getElementById("top");
const whoami = document.getElementById("whoami");
let cleanup = null;
let generation = 0;

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = raw.split("?");
  return { path, query: new URLSearchParams(query) };
}

// The header says who is signed in with what role, and whether the token is scoped (its scope on
// hover); the Tokens entry is there for admins without a scope only.
function showPrincipal() {
  const p = principal();
  if (p) {
    replace(whoami, "signed in as ", h("strong", { class: "who" }, p.name), " ",
      h("span", { class: "role", title: p.scope ? scopeText(p.scope) : null }, p.scope ? `(${p.role}, scoped)` : `(${p.role})`));
  } else clear(whoami);
  document.getElementById("nav-tokens").hidden = !can("manageTokens");
}

function signOut() {
  clearToken();
  setPrincipal(null);
  showPrincipal();
}

// Stops the page shown (its refreshes, its pending loads): a page left for the sign-in form kept
// refreshing, each refresh refused (401) drawing the form again under what was being typed.
function leavePage() {
  if (cleanup) { try { cleanup(); } catch { /* a page's cleanup never blocks navigation */ } }
  cleanup = null;
  return ++generation;
}

function showSignIn(note) {
  leavePage();
  top.hidden = true;
  document.title = "Sign in · hookrelay";
  clear(main);
  const input = h("input", {
    id: "token", name: "token", type: "password", autocomplete: "current-password", required: true,
    "aria-describedby": "token-hint",
  });
  const status = h("div", { id: "signin-status" });
  const form = h("form", { class: "signin", novalidate: true },
    h("h1", null, "Sign in to hookrelay"),
    note ? message("info", note) : null,
    h("div", { class: "field" },
      h("label", { for: "token" }, "API token"),
      input,
      h("p", { class: "hint", id: "token-hint" },
        "A token an admin made for you (hr_…), or the bootstrap token: the value of HOOKRELAY_TOKEN or the one " +
        "hookrelay printed at its first start. It is kept in this tab only (sessionStorage) and sent as a bearer header.")),
    h("button", { type: "submit", class: "primary" }, "Sign in"),
    status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clear(status);
    const t = input.value.trim();
    if (!t) {
      status.append(message("error", "Enter your API token."));
      input.focus();
      return;
    }
    let me;
    try {
      me = await get("/whoami", { token: t });
    } catch (e) {
      let text = e.message;
      // The server says which: a wrong token, an expired or a revoked one.
      if (e.status === 401) text = ["Wrong token: the server did not accept it (", withTimes(e.message), "). Check the token, or ask an admin for one."];
      else if (e.status === 429) text = `Too many wrong tokens from this address: ${e.message}`;
      status.append(message("error", text));
      input.select();
      return;
    }
    setToken(t);
    setPrincipal(me);
    route();
  });
  main.append(form);
  input.focus();
}

async function route() {
  const my = leavePage();
  if (!token()) { showSignIn(); return; }
  if (!principal()) {
    // A tab opened with a token already in it (a reload): who it is, before any page is drawn.
    try {
      const me = await get("/whoami");
      if (my !== generation) return;
      setPrincipal(me);
    } catch (e) {
      if (my !== generation || e.status === 401) return;  // 401: the sign-in form is shown
      top.hidden = true;
      clear(main);
      main.append(h("h1", null, "hookrelay"), message("error", `Could not tell who is signed in: ${e.message}`),
        h("p", { class: "row" }, h("button", { type: "button", onclick: () => route() }, "Try again"),
          h("button", { type: "button", onclick: () => { signOut(); showSignIn("Signed out. The token was removed from this tab."); } }, "Sign out")));
      return;
    }
  }
  showPrincipal();
  top.hidden = false;
  const { path, query } = parseHash();
  let match = null;
  let entry = null;
  for (const p of pages) {
    match = p.re.exec(path);
    if (match) { entry = p; break; }
  }
  // A fragment that is not valid percent-encoding ("#/events/%E0%A4%A") names no page: decoding
  // it threw an uncaught URIError, which left the page blank.
  let params = null;
  if (match) {
    try { params = match.slice(1).map(decodeURIComponent); } catch { entry = null; }
  }
  for (const a of document.querySelectorAll("#nav a")) {
    if (entry && a.getAttribute("href") === entry.nav) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  clear(main);
  if (!entry) {
    document.title = "Not found · hookrelay";
    main.append(h("h1", null, "No such page"), message("error", `There is no page at #${path}.`),
      h("p", null, h("a", { href: "#/" }, "Go to the overview")));
    return;
  }
  document.title = `${entry.title} · hookrelay`;
  if (entry.needs && !can(entry.needs)) {
    const back = entry.nav === `#${path}` ? ["#/", "Go to the overview"] : [entry.nav, `Back to ${document.querySelector(`#nav a[href="${entry.nav}"]`)?.textContent ?? "the list"}`];
    main.append(h("h1", null, entry.title), message("info", whyNot(entry.needs)),
      h("p", null, h("a", { href: back[0] }, back[1])));
    return;
  }
  const ctx = {
    params, query, view: entry.view,
    alive: () => my === generation,
  };
  // Each route renders into its own container: when another route starts before this one's
  // awaits are over (a hash change mid-load), it clears main, so what this one appends later lands
  // in a detached node instead of beside the newer page (two forms on one page).
  const view = h("div", { class: "view" });
  main.append(view);
  try {
    const c = await entry.page.render(view, ctx);
    if (my === generation) cleanup = typeof c === "function" ? c : null;
    else if (typeof c === "function") c();
  } catch (e) {
    if (my !== generation) return;
    if (e instanceof ApiError && e.status === 401) return;  // the sign-in form is shown
    clear(main);
    main.append(h("h1", null, entry.title),
      message("error", `Could not load this page: ${e.message}`),
      h("p", null, h("button", { type: "button", onclick: () => route() }, "Try again")));
  }
}

setUnauthenticatedHandler((e) => {
  signOut();
  showSignIn(["The token was not accepted any more (", withTimes(e.message), "); sign in again."]);
});

document.getElementById("signout").addEventListener("click", () => {
  signOut();
  showSignIn("Signed out. The token was removed from this tab.");
});

window.addEventListener("hashchange", () => { route(); main.focus({ preventScroll: true }); });
// "Skip to content" moves focus; its #main must not reach the hash router ("No such page").
document.querySelector("a.skip").addEventListener("click", (ev) => { ev.preventDefault(); main.focus(); });
setInterval(() => refreshTimes(main), 15000);
route();
