"""A small OpenAI-compatible chat server on 127.0.0.1 that records every request.

Hermes always streams, so ``/v1/chat/completions`` answers in SSE when the request asks
for ``stream: true`` and in plain JSON otherwise (the model classifier uses the latter).
Replies are scripted: a queue of ``Reply`` values (or a callable deciding per request);
when the queue is empty the server says "ok". Used by the tests, the live A/B benchmark,
``make demo`` and ``diagnostics.py --probe``; it never talks to anything but its caller.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union


@dataclass
class Reply:
    content: Optional[str] = "ok"
    tool_calls: Sequence[Tuple[str, Dict[str, Any]]] = ()
    reasoning_content: Optional[str] = None
    status: int = 200
    delay_s: float = 0.0
    stall_after_first_chunk_s: float = 0.0
    error_body: Optional[Dict[str, Any]] = None
    # Non-streaming extras (the model classifier's failure modes): ``raw_body`` is sent
    # verbatim instead of a chat completion (with ``status`` and ``content_type``), and
    # ``stall_mid_body_s`` sends half the body, then sleeps, then the rest.
    raw_body: Optional[Union[str, bytes]] = None
    content_type: str = "application/json"
    stall_mid_body_s: float = 0.0


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: Dict[str, str]
    body: Optional[Dict[str, Any]]
    raw: bytes = b""

    @property
    def tools(self) -> List[dict]:
        return list((self.body or {}).get("tools") or [])

    @property
    def tool_names(self) -> List[str]:
        return [t.get("function", {}).get("name", "") for t in self.tools]

    @property
    def tools_json(self) -> str:
        return json.dumps((self.body or {}).get("tools"), sort_keys=False, ensure_ascii=False)


Responder = Callable[[Dict[str, Any]], Reply]


@dataclass
class StubLLM:
    replies: List[Reply] = field(default_factory=list)
    responder: Optional[Responder] = None
    requests: List[RecordedRequest] = field(default_factory=list)
    host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "StubLLM":
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle on, the body waits
            # for the client's delayed ACK and every reply costs ~40 ms of nothing.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:  # Hermes probes /models and /api/v1/models
                stub._record(self, None, b"")
                if self.path.rstrip("/").endswith("/v1/models"):
                    self._json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                stub._record(self, body, raw)
                if not self.path.rstrip("/").endswith("/chat/completions") or body is None:
                    self._json(404, {"error": {"message": "not found"}})
                    return
                reply = stub._next_reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    raw_out = reply.raw_body.encode() if isinstance(reply.raw_body, str) else reply.raw_body
                    self._send(reply.status, raw_out, reply.content_type, reply.stall_mid_body_s)
                    return
                if reply.status != 200:
                    self._json(reply.status, reply.error_body or {"error": {"message": f"stub error {reply.status}"}},
                               reply.stall_mid_body_s)
                    return
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._json(200, _completion(body, reply), reply.stall_mid_body_s)

            def _json(self, status: int, payload: Dict[str, Any], stall_mid_body_s: float = 0.0) -> None:
                self._send(status, json.dumps(payload).encode(), "application/json", stall_mid_body_s)

            def _send(self, status: int, data: bytes, content_type: str, stall_mid_body_s: float = 0.0) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    if stall_mid_body_s:
                        half = len(data) // 2
                        self.wfile.write(data[:half])
                        self.wfile.flush()
                        time.sleep(stall_mid_body_s)
                        data = data[half:]
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _stream(self, body: Dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for i, chunk in enumerate(_chunks(body, reply)):
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                        if i == 0 and reply.stall_after_first_chunk_s:
                            time.sleep(reply.stall_after_first_chunk_s)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._server = ThreadingHTTPServer((self.host, 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: stop() waits for one poll, and tests stop a server each.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="stub-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "StubLLM":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting and records ------------------------------------------
    def script(self, *replies: Union[Reply, str]) -> None:
        with self._lock:
            self.replies.extend(Reply(content=r) if isinstance(r, str) else r for r in replies)

    def chat_requests(self) -> List[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/").endswith("/chat/completions")]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.replies.clear()

    def _record(self, handler: BaseHTTPRequestHandler, body: Optional[Dict[str, Any]], raw: bytes) -> None:
        rec = RecordedRequest(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body, raw)
        with self._lock:
            self.requests.append(rec)

    def _next_reply(self, body: Dict[str, Any]) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return Reply()


def _call_id() -> str:
    return "call_" + uuid.uuid4().hex[:12]


def _completion(body: Dict[str, Any], reply: Reply) -> Dict[str, Any]:
    message: Dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": _call_id(), "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for n, a in reply.tool_calls
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "stub-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def _chunks(body: Dict[str, Any], reply: Reply):
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "stub-model")}

    def chunk(delta: Dict[str, Any], finish: Optional[str] = None) -> Dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant"})
    if reply.reasoning_content:
        yield chunk({"reasoning_content": reply.reasoning_content})
    if reply.content:
        yield chunk({"content": reply.content})
    for i, (name, args) in enumerate(reply.tool_calls):
        yield chunk({"tool_calls": [{"index": i, "id": _call_id(), "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(args)}}]})
    final = chunk({}, "tool_calls" if reply.tool_calls else "stop")
    final["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    yield final
