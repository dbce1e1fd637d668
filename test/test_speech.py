"""Speech without ROS: espeak-ng utterances through the offline recogniser, the label grammar,
and the intents the navigator reads from what was heard."""

from __future__ import annotations

import shutil

import pytest

from vlkng_ros.core.intent import parse_intent
from vlkng_ros.core.speech import Speaker, command_grammar, read_wav_16k

LABELS = ["fridge", "backpack", "sofa", "coffee table", "toaster", "bookshelf", "armchair", "potted plant",
          "umbrella", "shoe rack", "kettle", "bag", "helmet", "laptop", "monitor", "desk", "chair", "bowl"]


def test_grammar_leaves_out_labels_the_dictionary_lacks():
    grammar, dropped = command_grammar(["Fridge", "coffee table", "zzqx gadget", "TV-stand"],
                                       known_word=lambda w: w != "zzqx")
    assert dropped == ["zzqx gadget"]
    assert "<thing> = coffee table | fridge | tv stand;" in grammar
    assert "public <command> = <goto> | <ask> | <stop>;" in grammar


@pytest.fixture(scope="module")
def recogniser():
    pytest.importorskip("pocketsphinx", reason="pip install pocketsphinx")
    from vlkng_ros.core.speech import PocketSphinxRecogniser

    return PocketSphinxRecogniser(LABELS)


@pytest.mark.parametrize("utterance,kind,text", [
    ("go to the fridge", "goto", "the fridge"),
    ("where did you see my backpack", "ask", "where did you see my backpack?"),
    ("stop", "stop", ""),
    ("take me to the coffee table", "goto", "the coffee table"),
])
def test_synthesised_speech_is_recognised_as_the_right_command(recogniser, utterance, kind, text):
    if not shutil.which("espeak-ng"):
        pytest.skip("speech test: espeak-ng is not installed (apt install espeak-ng)")
    pcm = b"\0\0" * 8000 + Speaker("espeak-ng").synthesise(utterance) + b"\0\0" * 16000
    heard = []
    for i in range(0, len(pcm), 3200):  # streamed in 100 ms chunks; the endpointer cuts the utterance
        heard += recogniser.accept(pcm[i:i + 3200])
    heard += recogniser.flush()
    assert heard == [utterance]
    intent = parse_intent(heard[0])
    assert (intent.kind, intent.text) == (kind, text)


def test_silence_and_noise_are_not_commands(recogniser):
    import numpy as np

    noise = (np.random.default_rng(0).normal(0, 30, 16000 * 2)).astype("<i2").tobytes()
    assert recogniser.accept(b"\0\0" * 16000) + recogniser.accept(noise) + recogniser.flush() == []


def test_wav_is_resampled_to_16k_mono(tmp_path):
    import wave

    import numpy as np

    path = tmp_path / "a.wav"
    t = np.arange(22050) / 22050
    stereo = np.stack([np.sin(2 * np.pi * 440 * t)] * 2, axis=1) * 10000
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(22050)
        w.writeframes(stereo.astype("<i2").tobytes())
    pcm = np.frombuffer(read_wav_16k(path), "<i2")
    assert len(pcm) == 16000
    spectrum = np.abs(np.fft.rfft(pcm))
    assert abs(np.argmax(spectrum) - 440) <= 1  # one second: bin = Hz
