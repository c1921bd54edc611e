// The management API with the admin token as a bearer header. The token lives in sessionStorage:
// it is gone when the tab closes, and no cookie is ever sent (so there is no CSRF surface).
const KEY = "hookrelay.token";

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(t) { sessionStorage.setItem(KEY, t); }
export function clearToken() { sessionStorage.removeItem(KEY); }

let onUnauthenticated = () => {};
export function setUnauthenticatedHandler(f) { onUnauthenticated = f; }

// JSON text sent as it is, inside a request body built from objects: a filter typed by the user
// keeps its numbers exact (18446744073709551615 would be rounded by JSON.parse + stringify).
// REQUIRES: `text` is valid JSON.
class RawJson {
  constructor(text) { this.text = text; }
}
export function rawJson(text) { return new RawJson(text); }

function serialize(body) {
  const raws = [];
  const out = JSON.stringify(body, (k, v) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `\u0000raw${raws.length - 1}\u0000`;
  });
  // The marker is a whole string of NUL, raw, index, NUL (written escaped): no body the dashboard
  // sends holds such a string.
  return out.replace(/"\\u0000raw(\d+)\\u0000"/g, (m, i) => raws[Number(i)]);
}

// Calls the API; resolves to the parsed JSON, rejects with an ApiError whose message is the
// API's own (or says the server could not be reached).
export async function api(method, path, body, opts = {}) {
  const headers = { Accept: "application/json" };
  const t = opts.token ?? token();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(`/api/v1${path}`, {
      method, headers, body: body === undefined ? undefined : serialize(body),
      cache: "no-store", credentials: "omit",
    });
  } catch (e) {
    throw new ApiError(0, "unreachable", `The hookrelay server could not be reached (${e.message}).`);
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) {
    const err = data && data.error;
    const msg = err?.message || `${res.status} ${res.statusText}`;
    const e = new ApiError(res.status, err?.code || "error", msg, err?.field);
    if (res.status === 401 && !opts.token) onUnauthenticated(e);
    throw e;
  }
  return data;
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body) => api("POST", path, body ?? {});
export const patch = (path, body) => api("PATCH", path, body);
export const del = (path) => api("DELETE", path);

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") u.set(k, v);
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}

export const enc = encodeURIComponent;
