"""vLLM-style Prometheus metrics of the simulated server (text exposition format)."""

from __future__ import annotations

from bisect import bisect_left

# vLLM's bucket edges for these histograms (seconds)
TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
TPOT_BUCKETS = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
E2E_BUCKETS = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)


class Histogram:
    """A cumulative Prometheus histogram."""

    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.buckets = name, help_text, buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1

    def render(self, labels: str) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for edge, count in zip(self.buckets, self.counts, strict=False):
            running += count
            lines.append(f'{self.name}_bucket{{{labels},le="{edge}"}} {running}')
        lines.append(f'{self.name}_bucket{{{labels},le="+Inf"}} {self.n}')
        lines.append(f"{self.name}_sum{{{labels}}} {self.total}")
        lines.append(f"{self.name}_count{{{labels}}} {self.n}")
        return lines


class ServerMetrics:
    """Counters and histograms the server updates; gauges are read at scrape time."""

    def __init__(self, model_name: str) -> None:
        self.labels = f'model_name="{model_name}"'
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.success = 0
        self.errors = 0
        self.ttft = Histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            TTFT_BUCKETS,
        )
        self.tpot = Histogram(
            "vllm:time_per_output_token_seconds",
            "Histogram of time per output token in seconds.",
            TPOT_BUCKETS,
        )
        self.e2e = Histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of end to end request latency in seconds.",
            E2E_BUCKETS,
        )

    def render(self, running: int, waiting: int, kv_usage: float) -> str:
        lab = self.labels
        lines: list[str] = []

        def scalar(name: str, kind: str, help_text: str, value: float, extra: str = "") -> None:
            lines.extend([f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"])
            lines.append(f"{name}{{{lab}{extra}}} {value}")

        scalar(
            "vllm:num_requests_running",
            "gauge",
            "Number of requests in model execution batches.",
            running,
        )
        scalar(
            "vllm:num_requests_waiting",
            "gauge",
            "Number of requests waiting to be processed.",
            waiting,
        )
        scalar(
            "vllm:kv_cache_usage_perc",
            "gauge",
            "KV-cache usage. 1 means 100 percent usage.",
            kv_usage,
        )
        scalar("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage (older name).", kv_usage)
        scalar(
            "vllm:prompt_tokens_total",
            "counter",
            "Number of prefill tokens processed.",
            self.prompt_tokens,
        )
        scalar(
            "vllm:generation_tokens_total",
            "counter",
            "Number of generation tokens processed.",
            self.generation_tokens,
        )
        scalar(
            "vllm:request_success_total",
            "counter",
            "Count of successfully processed requests.",
            self.success,
            ',finished_reason="length"',
        )
        for hist in (self.ttft, self.tpot, self.e2e):
            lines.extend(hist.render(lab))
        return "\n".join(lines) + "\n"
