#!/usr/bin/env python3
"""A POST sink for the package test: answers 200 and appends each request's body, one JSON line
per request ({"path": ..., "body": ...}), to the file given. Prints its port on stdout once it
listens (port 0 picks a free one)."""

import http.server
import json
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        with open(self.server.record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"path": self.path, "body": body}) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    record, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.record = record
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
