"""Continuous batching of one DP rank, after vLLM's V1 scheduler.

Each step: every running sequence in decode takes one token; in-progress prefills
take chunks of the remaining token budget (`max_num_batched_tokens`, chunked
prefill); then waiting sequences are admitted first-come-first-served while
`max_num_seqs`, the budget and free KV blocks allow. When a running sequence
needs a block and none is free, the most recently admitted running sequence is
preempted (its blocks freed, recomputed later from the start, as vLLM's
recompute preemption does).

Two TRT-LLM policies are options: without chunked prefill (TRT-LLM's default) a
prompt is scheduled whole or waits, first come first served; with batch waiting
(`batch_wait_timeout_iters`, `batch_wait_max_tokens_ratio`) new prompts are held
while sequences decode, until enough prompt tokens have gathered or the hold
timed out.

Decode sequences are kept in aggregate (sums and per-residue counts), so a
step costs O(1) per rank however many sequences are decoding: a sequence that
entered decode at step `s0` with `g0` tokens generated has, at step `s`,
generated `g0 + s - s0` tokens and writes the KV of position
`prompt + g0 - 1 + s - s0`; it needs a new block when that position is a
multiple of the block size.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum

from inferbench.sim.admission import KvAdmission, NewTokenRatio
from inferbench.sim.kv import BlockPool
from inferbench.sim.perf import RankBatch
from inferbench.sim.prefix import PrefixCache


class SeqState(IntEnum):
    WAITING = 0
    PREFILL = 1
    DECODE = 2
    LOADING = 3  # disaggregated decode: blocks held, KV arriving from a prefill worker
    READY = 4  # KV arrived; joins decode at the next step
    DONE = 5


@dataclass(slots=True, eq=False)
class Seq:
    """One request inside the engine."""

    rid: int
    prompt: int
    output: int  # tokens to generate (max_tokens; the simulator always honours ignore_eos)
    arrival: float
    prefill_only: bool = False  # disaggregated prefill: stop after the first token
    state: SeqState = SeqState.WAITING
    generated: int = 0
    computed: int = 0  # tokens of the current prefill target whose KV exists
    blocks: int = 0
    s0: int = 0
    g0: int = 0
    finish_step: int = -1
    # emitted token times: floats, or (start, stop) slices of the worker's step_times
    pieces: list[float | tuple[int, int]] = field(default_factory=list)
    preemptions: int = 0
    first_token: float | None = None
    done: float | None = None
    ready_at: float = 0.0
    rank: int = -1
    tag: object = None  # the driver's handle (an HTTP stream, a client slot)
    step_times: list[float] | None = None  # end times of the decoding worker's steps
    hashes: tuple[int, ...] = ()  # prompt block hash chain (prefix caching; empty: none)
    cached_tokens: int = 0  # prompt tokens its last admission found cached (GPU or DRAM)
    pinned: bool = False  # its blocks are pinned in the rank's prefix cache
    probe: tuple[int, int] = (-1, 0)  # (cache version, cached tokens) of its last lookup

    def token_times(self) -> list[float]:
        """When each output token was produced, in order."""
        times: list[float] = []
        steps = self.step_times or []
        for piece in self.pieces:
            if isinstance(piece, tuple):
                times.extend(steps[piece[0] : piece[1]])
            else:
                times.append(piece)
        return times

    @property
    def prefill_target(self) -> int:
        """Tokens a prefill must compute: the prompt plus any output lost to preemption."""
        return self.prompt + self.generated


_IDLE = RankBatch()
_NONE: list[Seq] = []  # shared empty result of `complete`; callers only read it
_NO_CHUNKS: list[tuple[Seq, int]] = []  # shared empty chunks of a decode-only step; read only


class RankScheduler:
    """Waiting queue, running set and KV blocks of one DP rank."""

    def __init__(
        self,
        index: int,
        pool: BlockPool,
        *,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        chunked_prefill: bool = True,
        batch_wait: tuple[int, int] = (0, 0),
        kv_admission: KvAdmission | None = None,
    ) -> None:
        self.index = index
        self.pool = pool
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.chunked_prefill = chunked_prefill  # False: a prompt is prefilled whole
        self.batch_wait = batch_wait  # (steps, tokens): TRT-LLM batch waiting; (0, 0) off
        self._waited = 0  # steps the current contexts have been held
        # SGLang: admission reserves KV for the running requests' outputs (None: vLLM's rule)
        self.ratio = NewTokenRatio(kv_admission) if kv_admission is not None else None
        self.waiting: deque[Seq] = deque()
        self.running: dict[int, Seq] = {}  # admission order; preemption pops the newest
        self.prefilling: dict[int, Seq] = {}
        self.ready: list[Seq] = []
        self.decode_count = 0
        self._ctx_base = 0  # sum over decode seqs of prompt + g0 - s0
        self._residue = [0] * pool.block_size
        self.finish_heap: list[tuple[int, int, Seq]] = []
        self.preemptions = 0
        self.prefill_chunks = 0  # chunks scheduled so far (a prompt prefilled whole is one)
        self.scheduled_seqs = 0  # sequences scheduled so far, summed over steps
        self.queued_prefill_tokens = 0  # router load signal
        self.loading_admitted: list[Seq] = []  # remote-KV sequences given blocks this step
        self._allocated_step = -1  # the step whose decode blocks are already taken
        self.prefix: PrefixCache | None = None  # set when the engine caches prefixes
        self._blocked_head: Seq | None = None  # a remote-KV head refused blocks ...
        self._blocked_free = 0  # ... when this many were free
        self._decode_batch = RankBatch()  # this rank's decode-only batch, refilled each step

    # -- queue --------------------------------------------------------------------------
    def enqueue(self, seq: Seq) -> None:
        seq.rank = self.index
        self.waiting.append(seq)
        if seq.state != SeqState.LOADING:
            self.queued_prefill_tokens += seq.prefill_target

    @property
    def load(self) -> int:
        return len(self.running) + len(self.waiting)

    # -- decode aggregate ---------------------------------------------------------------
    def _residue_of(self, seq: Seq) -> int:
        return (seq.prompt + seq.g0 - 1 - seq.s0) % self.pool.block_size

    def _enter_decode(self, seq: Seq, step: int) -> None:
        seq.state = SeqState.DECODE
        seq.s0, seq.g0 = step, seq.generated
        seq.finish_step = step + seq.output - seq.generated - 1
        self.decode_count += 1
        self._ctx_base += seq.prompt + seq.g0 - seq.s0
        self._residue[self._residue_of(seq)] += 1
        heapq.heappush(self.finish_heap, (seq.finish_step, seq.rid, seq))

    def _leave_decode(self, seq: Seq, step: int) -> None:
        """Take `seq` out of the aggregate before step `step`; settle its tokens and blocks."""
        seq.generated = seq.g0 + (step - seq.s0)
        seq.blocks = self.pool.blocks_for(seq.prompt + seq.generated - 1)
        if step > seq.s0:
            seq.pieces.append((seq.s0, step))
        self.decode_count -= 1
        self._ctx_base -= seq.prompt + seq.g0 - seq.s0
        self._residue[self._residue_of(seq)] -= 1

    def decode_ctx(self, step: int) -> int:
        return self._ctx_base + self.decode_count * step

    # -- preemption ---------------------------------------------------------------------
    def _preempt_newest(self, step: int) -> Seq | None:
        if not self.running:
            return None
        _, victim = self.running.popitem()
        if victim.state == SeqState.DECODE:
            bs = self.pool.block_size
            took_block = self._allocated_step == step and self._residue_of(victim) == (-step) % bs
            self._leave_decode(victim, step)
            victim.blocks += int(took_block)
        elif victim.state == SeqState.READY:
            self.ready.remove(victim)
        self.prefilling.pop(victim.rid, None)
        self._unpin(victim)
        self.pool.give_back(victim.blocks)
        victim.blocks, victim.computed = 0, 0
        victim.state = SeqState.WAITING
        victim.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(victim)
        self.queued_prefill_tokens += victim.prefill_target
        if self.ratio is not None:
            self.ratio.retracted(
                (self._output(s) - r, self._output(s)) for s, r in self._remaining(step)
            )
        return victim

    # -- one step -----------------------------------------------------------------------
    def schedule(self, step: int) -> tuple[RankBatch, list[tuple[Seq, int]]]:
        """Choose this rank's batch for worker step `step`: (batch, prefill chunks)."""
        if self.ready:
            for seq in self.ready:
                self._enter_decode(seq, step)
            self.ready.clear()
        pool = self.pool
        bs = pool.block_size
        need = self._residue[(-step) % bs]
        preempted = self.preemptions
        while need > pool.free and self.decode_count:
            self._preempt_newest(step)
            need = self._residue[(-step) % bs]
        if self.ratio is not None and self.decode_count and self.preemptions == preempted:
            self.ratio.decoded()
        pool.free -= need
        self._allocated_step = step
        if not self.prefilling and not self.waiting and self.prefix is None:
            # most ranks of most steps: decode only (`_decode_only`, inlined)
            n = self.decode_count
            if not n:
                return _IDLE, _NO_CHUNKS
            batch = self._decode_batch
            batch.decode_seqs = n
            batch.decode_ctx_tokens = self._ctx_base + n * step
            self.scheduled_seqs += n
            return batch, _NO_CHUNKS
        budget = self.max_num_batched_tokens - self.decode_count
        chunks: list[tuple[Seq, int]] = []
        if self.prefilling:
            for seq in list(self.prefilling.values()):
                if budget <= 0 or seq.rid not in self.prefilling:
                    break
                budget -= self._continue_prefill(seq, step, budget, chunks)
        if (
            self.waiting
            and len(self.running) < self.max_num_seqs
            and self._may_admit(budget)
            and not (self.batch_wait[0] and self._hold_contexts(budget))
        ):
            budget = self._admit(step, budget, chunks)
        if self.prefix is not None:
            self.prefix.fit(self.pool.free)
        return self._batch(step, chunks), chunks

    def _continue_prefill(
        self, seq: Seq, step: int, budget: int, chunks: list[tuple[Seq, int]]
    ) -> int:
        chunk = min(seq.prefill_target - seq.computed, budget)
        extra = self.pool.blocks_for(seq.computed + chunk) - seq.blocks
        while extra > self.pool.free:
            victim = self._preempt_newest(step)
            if victim is None or victim is seq:
                return 0
        self.pool.free -= extra
        seq.blocks += extra
        chunks.append((seq, chunk))
        return chunk

    def _may_admit(self, budget: int) -> bool:
        """False when the head of the queue surely waits again (saves a call per step)."""
        head = self.waiting[0]
        if head.state == SeqState.LOADING:
            # it was refused blocks, and none were freed since
            return not (head is self._blocked_head and self.pool.free <= self._blocked_free)
        return budget > 0

    def _hold_contexts(self, budget: int) -> bool:
        """TRT-LLM's batch waiting: while sequences decode, new contexts wait until the step
        would hold `batch_wait[1]` tokens or they have waited `batch_wait[0]` steps."""
        if not self.decode_count or self.waiting[0].state == SeqState.LOADING:
            return False
        ctx, room = 0, self.max_num_seqs - len(self.running)
        for seq in self.waiting:
            need = seq.prefill_target
            if room <= 0 or need > budget - ctx:
                if self.chunked_prefill:
                    ctx = budget if room > 0 else ctx
                break
            ctx += need
            room -= 1
        if not ctx:
            return False
        steps, tokens = self.batch_wait
        if self._waited < steps and ctx + self.decode_count < tokens:
            self._waited += 1
            return True
        self._waited = 0
        return False

    def _remaining(self, step: int) -> list[tuple[Seq, int]]:
        """(sequence, tokens it may still generate) for every running sequence."""
        out = []
        for s in self.running.values():
            made = s.g0 + step - s.s0 if s.state == SeqState.DECODE else s.generated
            out.append((s, self._output(s) - made))
        return out

    @staticmethod
    def _output(seq: Seq) -> int:
        """Tokens `seq` generates here: a disaggregated prefill makes only the first."""
        return 1 if seq.prefill_only else seq.output

    def _kv_admits(self, seq: Seq, cached: int, step: int, charged: int) -> bool:
        """SGLang's rule: the free KV, less what was charged this step and the share held for
        running outputs, must exceed the new request's prompt and output."""
        assert self.ratio is not None
        need = self.ratio.charge(seq.prefill_target - cached, self._output(seq) - seq.generated)
        free = self.pool.free * self.pool.block_size - charged
        most = self.ratio.current * self.ratio.spec.clip_tokens * len(self.running)
        if free - most > need:  # even the largest reservation leaves room: skip the sum
            return True
        return free - self.ratio.reserve(r for _, r in self._remaining(step)) > need

    def _admit(self, step: int, budget: int, chunks: list[tuple[Seq, int]]) -> int:
        charged = 0
        while self.waiting and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            if seq.state == SeqState.LOADING:  # remote KV: reserve blocks, no compute
                blocks = self.pool.blocks_for(seq.prompt)
                if not self.pool.take(blocks):
                    self._blocked_head, self._blocked_free = seq, self.pool.free
                    break
                self.waiting.popleft()
                seq.blocks = blocks
                self.running[seq.rid] = seq
                self.loading_admitted.append(seq)
                continue
            if budget <= 0:
                break
            cached = self._cached(seq)
            need = seq.prefill_target - cached
            if not self.chunked_prefill and budget < need <= self.max_num_batched_tokens:
                break  # scheduled whole or not at all (a longer recompute is still chunked)
            if self.ratio is not None:
                if not self._kv_admits(seq, cached, step, charged):
                    break
                # its output is held from now on; the prompt's blocks are taken below
                out = self._output(seq) - seq.generated
                charged += self.ratio.charge(need, out) - min(need, budget)
            chunk = min(need, budget)
            blocks = self.pool.blocks_for(cached + chunk)
            if not self.pool.take(blocks):
                break
            self.waiting.popleft()
            if self.prefix is not None and seq.hashes:
                cached, chunk, blocks = self._pin(seq, budget, blocks)
            seq.blocks, seq.computed, seq.state = blocks, cached, SeqState.PREFILL
            self.running[seq.rid] = seq
            self.prefilling[seq.rid] = seq
            chunks.append((seq, chunk))
            budget -= chunk
        return budget

    def _decode_only(self, step: int) -> RankBatch:
        """The decode-only batch of step `step`: this rank's one RankBatch, refilled (the
        worker reads it before the next step; a new object per rank and step cost more)."""
        n = self.decode_count
        if not n:
            return _IDLE
        batch = self._decode_batch
        batch.decode_seqs = n
        batch.decode_ctx_tokens = self._ctx_base + n * step
        self.scheduled_seqs += n
        return batch

    def _batch(self, step: int, chunks: list[tuple[Seq, int]]) -> RankBatch:
        if not chunks:
            return self._decode_only(step)
        tokens = attn = kv_read = 0.0
        seqs = 0
        for seq, chunk in chunks:
            seqs += chunk > 0
            tokens += chunk
            attn += chunk * (seq.computed + chunk / 2)
            kv_read += seq.computed
            self.queued_prefill_tokens -= chunk
        self.prefill_chunks += seqs
        self.scheduled_seqs += seqs + self.decode_count
        return RankBatch(
            prefill_tokens=int(tokens),
            prefill_attention_ctx=attn,
            prefill_kv_read_tokens=int(kv_read),
            decode_seqs=self.decode_count,
            decode_ctx_tokens=self.decode_ctx(step) if self.decode_count else 0,
            prefill_seqs=seqs,
        )

    def decode_only(self, step: int) -> bool:
        """Step `step` would only decode: nothing waits, prefills, joins or finishes here,
        and the blocks the decoding sequences need are free (no preemption), so `schedule`
        takes its decode-only path and the step's end changes nothing but the clock."""
        heap = self.finish_heap
        return (
            not self.ready
            and not self.waiting
            and not self.prefilling
            and self.prefix is None
            and not (heap and heap[0][0] <= step)
            and self._residue[(-step) % self.pool.block_size] <= self.pool.free
        )

    def nothing_due(self, step: int) -> bool:
        """No decode sequence finishes at step `step` (its chunks aside)."""
        heap = self.finish_heap
        return not heap or heap[0][0] > step

    def complete(
        self, step: int, chunks: list[tuple[Seq, int]], end: float
    ) -> tuple[list[Seq], list[Seq]]:
        """End step `step`: (sequences that finished, prefills that produced a token)."""
        heap = self.finish_heap
        if not chunks and (not heap or heap[0][0] > step):
            return _NONE, _NONE
        finished: list[Seq] = []
        prefilled: list[Seq] = []
        for seq, chunk in chunks:
            if seq.state != SeqState.PREFILL:
                continue
            seq.computed += chunk
            if seq.computed >= seq.prefill_target:
                del self.prefilling[seq.rid]
                seq.generated += 1
                if not seq.prefill_only:  # a disaggregated first token reaches the user later
                    seq.pieces.append(end)
                    if seq.first_token is None:
                        seq.first_token = end
                prefilled.append(seq)
                if seq.prefill_only or seq.generated >= seq.output:
                    self._release(seq, end)
                    finished.append(seq)
                else:
                    self._enter_decode(seq, step + 1)
        while heap and heap[0][0] <= step:
            _, _, seq = heapq.heappop(heap)
            if seq.state != SeqState.DECODE or seq.finish_step != step:
                continue  # stale entry of a preempted sequence
            self._leave_decode(seq, step + 1)
            self._release(seq, end)
            finished.append(seq)
        return finished, prefilled

    def _cached(self, seq: Seq) -> int:
        if self.prefix is None or not seq.hashes:
            return 0
        if seq.probe[0] != self.prefix.version:  # a waiting head is probed every step
            gpu, cpu = self.prefix.lookup(seq.hashes, seq.prompt)
            seq.probe = (self.prefix.version, gpu + cpu)
        return seq.probe[1]

    def _pin(self, seq: Seq, budget: int, blocks: int) -> tuple[int, int, int]:
        """Admit `seq` into the prefix cache: its exact cached tokens, chunk and blocks.

        The probe that sized `blocks` may be stale (evictions do not invalidate it), so the
        chunk is refitted to the exact hit and the blocks taken."""
        assert self.prefix is not None
        cached = seq.cached_tokens = self.prefix.admit(seq.hashes, seq.prompt)
        seq.pinned = True
        self.queued_prefill_tokens -= cached  # never computed here
        chunk = min(seq.prefill_target - cached, budget)
        need = self.pool.blocks_for(cached + chunk)
        if need > blocks and not self.pool.take(need - blocks):
            chunk = max(0, min(chunk, blocks * self.pool.block_size - cached))
        else:
            blocks = max(blocks, need)
        return cached, chunk, blocks

    def _unpin(self, seq: Seq) -> None:
        if seq.pinned and self.prefix is not None:
            self.prefix.release(seq.hashes)
            seq.pinned = False

    def _release(self, seq: Seq, end: float) -> None:
        self._unpin(seq)
        self.running.pop(seq.rid, None)
        self.pool.give_back(seq.blocks)
        seq.blocks = 0
        seq.state = SeqState.DONE
        seq.done = end

    def decoding(self) -> list[Seq]:
        """Sequences decoding now (O(n); only the real-time server asks)."""
        return [s for s in self.running.values() if s.state == SeqState.DECODE]
