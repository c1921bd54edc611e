#!/usr/bin/env python3
"""A stand-in webhook endpoint for trying hookrelay on one machine.

Answers every POST with the status given (200 by default) and prints one line per request:
the status it answered and the webhook-id hookrelay sent. Standard library only.

  python3 examples/endpoint.py                # a healthy endpoint on 127.0.0.1:9000
  python3 examples/endpoint.py --status 503   # one that is down (hookrelay retries)
  python3 examples/endpoint.py --status 400   # one that refuses (final: not retried)
"""
import argparse
import http.server
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--status", type=int, default=200, help="what every POST gets")
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(args.status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            print(f"{args.status} {self.path} webhook-id {self.headers.get('webhook-id')}",
                  flush=True)

        def log_message(self, *unused):  # one line per request is printed above
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"endpoint on http://127.0.0.1:{args.port}/ answering {args.status}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
