// Pretty-printing JSON with bounds (the event page): a body may be megabytes of deeply nested
// arrays, and JSON.stringify(JSON.parse(body), null, 2) of 600 KB of them took seconds and tens of
// MB of indentation. This re-indents the text in one pass instead, without parsing it, so it
// works on a body cut in the middle too, costs time linear in what it reads, writes at most
// `maxOut` characters, and indents at most `maxDepth` levels (deeper levels stay on one line).
// Strings are copied as they are (escapes included).
export function prettyJson(text, { maxDepth = 20, maxOut = 64 * 1024, indent = 2 } = {}) {
  let out = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  let i = 0;
  const newline = () => { out += `\n${" ".repeat(Math.min(depth, maxDepth) * indent)}`; };
  for (; i < text.length && out.length < maxOut; i += 1) {
    const c = text[i];
    if (inString) {
      // Copy the run up to the next quote or backslash at once.
      let j = i;
      while (j < text.length && text[j] !== '"' && text[j] !== "\\") j += 1;
      if (j > i) { out += text.slice(i, j); i = j - 1; escaped = false; continue; }
      out += c;
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else inString = false;
      continue;
    }
    switch (c) {
      case '"': inString = true; out += c; break;
      case " ": case "\n": case "\r": case "\t": break;
      case "{": case "[": {
        let j = i + 1;
        while (j < text.length && " \n\r\t".includes(text[j])) j += 1;
        if (text[j] === (c === "{" ? "}" : "]")) { out += c + text[j]; i = j; break; }
        out += c;
        depth += 1;
        if (depth <= maxDepth) newline();
        break;
      }
      case "}": case "]":
        depth = Math.max(0, depth - 1);
        if (depth < maxDepth) newline();
        out += c;
        break;
      case ",":
        out += c;
        if (depth <= maxDepth) newline();
        break;
      case ":": out += ": "; break;
      default: out += c;
    }
  }
  const cut = i < text.length;
  return { text: out.length > maxOut ? out.slice(0, maxOut) : out, cut: cut || out.length > maxOut };
}

// Whether `text` looks like JSON (an object or an array) by its first character: enough to
// choose the view of a body that is too large to parse whole.
export function looksLikeJson(text) {
  return /^\s*[[{]/.test(text.slice(0, 256));
}
