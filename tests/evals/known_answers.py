"""A small GSM8K-format dataset of our own and a server that knows some of its answers.

The server answers the OpenAI chat and completions APIs (non-streaming, as lm-eval asks):
it finds the last `Question:` in the prompt and, for the first `known` questions of the
dataset, answers with the right `#### N` line; for the others it answers a wrong number.
So the expected exact-match score is known exactly: known / len(QUESTIONS).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# (question, worked answer, final number): written for these tests, in GSM8K's shape.
QUESTIONS: list[tuple[str, str, int]] = [
    ("Ana has 3 boxes of 4 pens. How many pens does she have?", "3 * 4 = 12", 12),
    ("A bus carries 20 people and 7 get off. How many remain?", "20 - 7 = 13", 13),
    ("Tom reads 5 pages a day for 6 days. How many pages?", "5 * 6 = 30", 30),
    ("A pie is cut into 8 slices and 3 are eaten. How many are left?", "8 - 3 = 5", 5),
    ("Lia buys 2 shirts at $15 each. How much does she pay?", "2 * 15 = 30", 30),
    ("There are 9 rows of 9 chairs. How many chairs?", "9 * 9 = 81", 81),
    ("A tank holds 100 liters and 45 are used. How many remain?", "100 - 45 = 55", 55),
    ("Sam earns $12 an hour for 8 hours. How much does he earn?", "12 * 8 = 96", 96),
    ("A class of 28 splits into 4 equal teams. How big is a team?", "28 / 4 = 7", 7),
    ("Ben has 50 marbles and gives away 18. How many are left?", "50 - 18 = 32", 32),
]


def write_dataset(path: Path) -> Path:
    with path.open("w") as f:
        for q, work, n in QUESTIONS:
            f.write(json.dumps({"question": q, "answer": f"{work}\n#### {n}"}) + "\n")
    return path


@dataclass
class KnownAnswerServer:
    url: str
    requests: int = 0


def _answer(prompt: str, known: int) -> str:
    question = prompt.rsplit("Question:", 1)[-1].split("\n", 1)[0].strip()
    for i, (q, work, n) in enumerate(QUESTIONS):
        if q == question:
            return f"{work}\n#### {n}" if i < known else f"I think\n#### {n + 1000}"
    return "#### -1"


@contextmanager
def known_answer_server(
    known: int = 7, fail_after: int | None = None, reasoning: bool = False
) -> Iterator[KnownAnswerServer]:
    """Serve on 127.0.0.1; with `fail_after`, answer 500 to every request after that many;
    with `reasoning`, chat answers come as a reasoning model's: `content` null, the answer in
    `reasoning_content` (SGLang's and older vLLM's field)."""
    state = KnownAnswerServer(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def _send(self, status: int, body: dict[str, object]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"data": [{"id": "known", "object": "model", "owned_by": "tests"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state.requests += 1
                n = state.requests
            if fail_after is not None and n > fail_after:
                self._send(500, {"error": {"message": "engine died"}})
                return
            if self.path.endswith("/chat/completions"):
                prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
                answer = _answer(prompt, known)
                message: dict[str, object] = {"role": "assistant", "content": answer}
                if reasoning:
                    message = {"role": "assistant", "content": None, "reasoning_content": answer}
                choice: dict[str, object] = {
                    "index": 0,
                    "message": message,
                    "finish_reason": "stop",
                }
            else:
                prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
                self._send(
                    200,
                    {
                        "object": "text_completion",
                        "choices": [
                            {"index": i, "text": _answer(p, known), "finish_reason": "stop"}
                            for i, p in enumerate(prompts)
                        ],
                    },
                )
                return
            self._send(200, {"object": "chat.completion", "choices": [choice]})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
