"""A small real HTTP server process that behaves like an engine, badly when asked.

    python engine_server.py --port 0 [--ready-after S] [--never-ready] [--crash-at-start]
                            [--die-after S] [--print-url]

`/health` answers 200 once ready; `/v1/work` answers 200 with a JSON body. With `--print-url`
it prints `inferbench sim: listening on http://127.0.0.1:PORT` like the simulator.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--ready-after", type=float, default=0.0)
    ap.add_argument("--never-ready", action="store_true")
    ap.add_argument("--crash-at-start", action="store_true")
    ap.add_argument("--die-after", type=float, default=None)
    ap.add_argument("--print-url", action="store_true")
    args = ap.parse_args()
    if args.crash_at_start:
        print("engine: CUDA out of memory while loading weights", flush=True)
        sys.exit(7)
    started = time.monotonic()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def do_GET(self) -> None:
            ready = not args.never_ready and time.monotonic() - started >= args.ready_after
            code = 200 if (self.path != "/health" or ready) else 503
            body = b'{"ok": true}'
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.die_after is not None:
        threading.Timer(args.die_after, lambda: os._exit(9)).start()
    port = server.server_address[1]
    print(f"engine: pid {os.getpid()}", flush=True)
    if args.print_url:
        print(f"inferbench sim: listening on http://127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
