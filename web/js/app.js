// The dashboard's shell: sign-in, navigation, and the hash router (/ui/#/events/01J…). Every page
// is a module exporting `render(main, ctx)`; it may return a cleanup function (timers).
import { h, clear, message } from "./dom.js";
import { get, setToken, clearToken, token, setUnauthenticatedHandler, ApiError } from "./api.js";
import { refreshTimes } from "./format.js";
import * as overview from "./pages/overview.js";
import * as events from "./pages/events.js";
import * as eventDetail from "./pages/event.js";
import * as destinations from "./pages/destinations.js";
import * as sources from "./pages/sources.js";
import * as routes from "./pages/routes.js";
import * as replays from "./pages/replays.js";
import * as audit from "./pages/audit.js";

const pages = [
  { re: /^\/?$/, page: overview, nav: "#/", title: "Overview" },
  { re: /^\/events$/, page: events, nav: "#/events", title: "Events" },
  { re: /^\/events\/([^/]+)$/, page: eventDetail, nav: "#/events", title: "Event" },
  { re: /^\/destinations$/, page: destinations, nav: "#/destinations", title: "Destinations", view: "list" },
  { re: /^\/destinations\/\+new$/, page: destinations, nav: "#/destinations", title: "New destination", view: "new" },
  { re: /^\/destinations\/([^/]+)$/, page: destinations, nav: "#/destinations", title: "Destination", view: "detail" },
  { re: /^\/sources$/, page: sources, nav: "#/sources", title: "Sources", view: "list" },
  { re: /^\/sources\/\+new$/, page: sources, nav: "#/sources", title: "New source", view: "new" },
  { re: /^\/sources\/([^/]+)$/, page: sources, nav: "#/sources", title: "Source", view: "detail" },
  { re: /^\/routes$/, page: routes, nav: "#/routes", title: "Routes", view: "list" },
  { re: /^\/routes\/\+new$/, page: routes, nav: "#/routes", title: "New route", view: "new" },
  { re: /^\/routes\/([^/]+)$/, page: routes, nav: "#/routes", title: "Route", view: "detail" },
  { re: /^\/replays$/, page: replays, nav: "#/replays", title: "Bulk replays", view: "list" },
  { re: /^\/replays\/new$/, page: replays, nav: "#/replays", title: "New bulk replay", view: "new" },
  { re: /^\/replays\/([^/]+)$/, page: replays, nav: "#/replays", title: "Bulk replay", view: "detail" },
  { re: /^\/audit$/, page: audit, nav: "#/audit", title: "Audit trail" },
];

const main = document.getElementById("main");
const top = document.getElementById("top");
let cleanup = null;
let generation = 0;

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = raw.split("?");
  return { path, query: new URLSearchParams(query) };
}

function showSignIn(note) {
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
      h("label", { for: "token" }, "Admin token"),
      input,
      h("p", { class: "hint", id: "token-hint" },
        "The token hookrelay printed at its first start, or the value of HOOKRELAY_TOKEN. It is kept " +
        "in this tab only (sessionStorage) and sent as a bearer header.")),
    h("button", { type: "submit", class: "primary" }, "Sign in"),
    status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clear(status);
    const t = input.value.trim();
    if (!t) {
      status.append(message("error", "Enter the admin token."));
      input.focus();
      return;
    }
    try {
      await get("/audit?limit=1", { token: t });
    } catch (e) {
      let text = e.message;
      if (e.status === 401) text = "Wrong token: the server did not accept it. Check HOOKRELAY_TOKEN or the token printed at the first start.";
      else if (e.status === 429) text = `Too many wrong tokens from this address: ${e.message}`;
      status.append(message("error", text));
      input.select();
      return;
    }
    setToken(t);
    route();
  });
  main.append(form);
  input.focus();
}

async function route() {
  if (cleanup) { try { cleanup(); } catch { /* a page's cleanup never blocks navigation */ } }
  cleanup = null;
  const my = ++generation;
  if (!token()) { showSignIn(); return; }
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

setUnauthenticatedHandler(() => {
  clearToken();
  showSignIn("The token was not accepted any more; sign in again.");
});

document.getElementById("signout").addEventListener("click", () => {
  clearToken();
  showSignIn("Signed out. The token was removed from this tab.");
});

window.addEventListener("hashchange", () => { route(); main.focus({ preventScroll: true }); });
// "Skip to content" moves focus; its #main must not reach the hash router ("No such page").
document.querySelector("a.skip").addEventListener("click", (ev) => { ev.preventDefault(); main.focus(); });
setInterval(() => refreshTimes(main), 15000);
route();
