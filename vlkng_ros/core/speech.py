"""Speech in and out, offline: a recogniser (16-bit mono PCM -> utterances as text) and a speaker.

Recognisers are pluggable (``make_recogniser``):
  * ``pocketsphinx`` (the PyPI wheel ships an English acoustic model and CMUdict). By default it
    listens for a restricted command grammar built from the memory's labels ("go to the fridge",
    "where did you see my backpack", "stop"), which a small offline model recognises far more
    reliably than free speech; ``grammar="open"`` uses its general English language model.
  * ``faster_whisper`` where that package and its weights are installed (``model`` = a local
    path or a name its cache holds); not installed here, so untested here.
Voice activity detection (pocketsphinx's Endpointer) cuts the stream into utterances.

Speaking: espeak-ng (Debian) when installed; ``synthesise`` gives 16 kHz PCM for tests and for
publishing audio.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import wave
from pathlib import Path
from typing import Iterable, Iterator, Protocol

log = logging.getLogger("vlkng.speech")
SAMPLE_RATE = 16000
GOTO_VERBS = ["go to", "take me to", "drive to", "bring me to", "navigate to", "head to"]
ASK_FORMS = ["where is", "where are", "where did you see", "where did i leave", "where did i put",
             "have you seen", "did you see", "did you see a", "what is next to", "what is on"]
STOP_WORDS = ["stop", "cancel", "halt", "stop moving"]


class Recogniser(Protocol):
    def accept(self, pcm: bytes) -> list[str]:
        """Feed 16-bit little-endian mono PCM; the utterances that ended in it, as text."""

    def flush(self) -> list[str]:
        """End of the stream: the utterance in progress, if any."""

    def set_vocabulary(self, labels: Iterable[str]) -> None:
        """The object labels commands may name (grammar recognisers rebuild their grammar)."""


def command_grammar(labels: Iterable[str], known_word=lambda w: True) -> tuple[str, list[str]]:
    """A JSGF grammar of the commands the navigator understands, over ``labels``; and the labels
    left out because a word of theirs is not in the recogniser's dictionary."""
    things, dropped = [], []
    for label in sorted({re.sub(r"[^a-z ]", " ", lab.lower()).strip() for lab in labels if lab}):
        label = " ".join(label.split())
        if not label:
            continue
        (things if all(known_word(w) for w in label.split()) else dropped).append(label)
    if not things:
        things = ["thing"]
    alt = lambda xs: " | ".join(xs)  # noqa: E731
    grammar = (
        "#JSGF V1.0;\ngrammar vlkng;\n"
        "public <command> = <goto> | <ask> | <stop>;\n"
        f"<stop> = {alt(STOP_WORDS)};\n"
        f"<goto> = ({alt(GOTO_VERBS)}) [the | my | a] <thing>;\n"
        f"<ask> = ({alt(ASK_FORMS)}) [the | my | a] <thing>;\n"
        f"<thing> = {alt(things)};\n")
    return grammar, dropped


class Segmenter:
    """Voice activity detection (pocketsphinx's Endpointer) over a PCM stream of any chunking."""

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        from pocketsphinx import Endpointer

        self.endpointer = Endpointer(sample_rate=sample_rate)
        self._buf = b""

    def feed(self, pcm: bytes) -> Iterator[tuple[bytes, bool, bool]]:
        """(speech, utterance started, utterance ended) for each stretch of speech in ``pcm``."""
        self._buf += bytes(pcm)
        size = self.endpointer.frame_bytes
        while len(self._buf) >= size:
            frame, self._buf = self._buf[:size], self._buf[size:]
            was_speaking = self.endpointer.in_speech
            speech = self.endpointer.process(frame)
            if speech is not None:
                yield speech, not was_speaking, not self.endpointer.in_speech

    def end(self) -> tuple[bool, bytes]:
        """End of the stream: (an utterance was in progress, its remaining speech)."""
        if not self.endpointer.in_speech:
            self._buf = b""
            return False, b""
        tail = self._buf[: self.endpointer.frame_bytes] or b"\0" * self.endpointer.frame_bytes
        self._buf = b""
        return True, self.endpointer.end_stream(tail) or b""


class PocketSphinxRecogniser:
    """pocketsphinx with its bundled English model; a label grammar by default (see module doc)."""

    def __init__(self, labels: Iterable[str] = (), grammar: str = "labels", sample_rate: int = SAMPLE_RATE) -> None:
        try:
            from pocketsphinx import Decoder
        except ImportError as e:  # pragma: no cover - it is in requirements.txt
            raise RuntimeError("speech: pip install pocketsphinx (offline English recogniser)") from e
        if grammar not in ("labels", "open"):
            raise ValueError(f"speech grammar {grammar!r}: use labels or open")
        self.grammar = grammar
        self.sample_rate = sample_rate
        self.segmenter = Segmenter(sample_rate)
        kw = {"lm": None} if grammar == "labels" else {}
        self.decoder = Decoder(samprate=sample_rate, bestpath=False, loglevel="FATAL", **kw)
        self.dropped: list[str] = []
        self._labels: set[str] = set()
        if grammar == "labels":
            self.set_vocabulary(labels)

    def set_vocabulary(self, labels: Iterable[str]) -> None:
        new = set(labels)
        if self.grammar != "labels" or (new == self._labels and self._labels):
            return
        self._labels = new
        grammar, self.dropped = command_grammar(new, lambda w: self.decoder.lookup_word(w) is not None)
        if self.dropped:
            log.info("speech: %d label(s) have words the recogniser's dictionary lacks and cannot be said: %s",
                     len(self.dropped), ", ".join(self.dropped[:10]))
        self.decoder.add_jsgf_string("commands", grammar)
        self.decoder.activate_search("commands")

    def _hyp(self) -> list[str]:
        hyp = self.decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        return [text] if text else []

    def accept(self, pcm: bytes) -> list[str]:
        out: list[str] = []
        for speech, started, ended in self.segmenter.feed(pcm):
            if started:
                self.decoder.start_utt()
            self.decoder.process_raw(speech, False, False)
            if ended:
                self.decoder.end_utt()
                out += self._hyp()
        return out

    def flush(self) -> list[str]:
        open_utt, speech = self.segmenter.end()
        if not open_utt:
            return []
        if speech:
            self.decoder.process_raw(speech, False, False)
        self.decoder.end_utt()
        return self._hyp()


class FasterWhisperRecogniser:  # pragma: no cover - needs faster-whisper and its weights
    """faster-whisper on utterances cut by the same endpointer (free speech; no grammar)."""

    def __init__(self, model: str, sample_rate: int = SAMPLE_RATE) -> None:
        try:
            from faster_whisper import WhisperModel
        except ImportError as e:
            raise RuntimeError("speech engine faster_whisper: pip install faster-whisper "
                               "(and give speech model = a local model folder)") from e
        import numpy as np

        self._np = np
        self.model = WhisperModel(model, device="cpu", compute_type="int8")
        self.segmenter = Segmenter(sample_rate)
        self._utt = b""

    def set_vocabulary(self, labels: Iterable[str]) -> None:
        pass

    def _text(self) -> list[str]:
        audio = self._np.frombuffer(self._utt, self._np.int16).astype(self._np.float32) / 32768.0
        self._utt = b""
        segments, _ = self.model.transcribe(audio, language="en")
        text = " ".join(s.text for s in segments).strip()
        return [text] if text else []

    def accept(self, pcm: bytes) -> list[str]:
        out: list[str] = []
        for speech, _started, ended in self.segmenter.feed(pcm):
            self._utt += speech
            if ended:
                out += self._text()
        return out

    def flush(self) -> list[str]:
        self._utt += self.segmenter.end()[1]
        return self._text() if self._utt else []


def make_recogniser(engine: str, labels: Iterable[str] = (), grammar: str = "labels", model: str = "",
                    sample_rate: int = SAMPLE_RATE) -> Recogniser:
    if engine == "pocketsphinx":
        return PocketSphinxRecogniser(labels, grammar, sample_rate)
    if engine == "faster_whisper":
        return FasterWhisperRecogniser(model, sample_rate)  # pragma: no cover
    raise ValueError(f"speech engine {engine!r}: use pocketsphinx or faster_whisper")


# --- speaking ------------------------------------------------------------------------------------
class Speaker:
    """Says text aloud with espeak-ng (plays on the default audio device); silent where it is not
    installed (``available`` False, and ``speak`` logs the text instead)."""

    def __init__(self, engine: str = "auto", voice: str = "en-us") -> None:
        if engine not in ("auto", "espeak-ng", "none"):
            raise ValueError(f"tts engine {engine!r}: use auto, espeak-ng or none")
        self.binary = shutil.which("espeak-ng") if engine != "none" else None
        if engine == "espeak-ng" and not self.binary:
            raise RuntimeError("tts espeak-ng: not installed (apt install espeak-ng)")
        self.voice = voice
        self.spoken: list[str] = []

    @property
    def available(self) -> bool:
        return self.binary is not None

    def speak(self, text: str) -> None:
        self.spoken.append(text)
        if not self.binary:
            log.info("(no speech synthesiser) reply: %s", text)
            return
        subprocess.Popen([self.binary, "-v", self.voice, "--", text], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)

    def synthesise(self, text: str, rate_wpm: int = 170) -> bytes:
        """The text as 16 kHz 16-bit mono PCM (espeak-ng writes 22.05 kHz; resampled here)."""
        if not self.binary:
            raise RuntimeError("no speech synthesiser installed (apt install espeak-ng)")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "say.wav"
            subprocess.run([self.binary, "-v", self.voice, "-s", str(rate_wpm), "-w", str(path), "--", text],
                           check=True, capture_output=True, timeout=30)
            return read_wav_16k(path)


def read_wav_16k(path: str | Path) -> bytes:
    """A 16-bit PCM WAV file as 16 kHz mono PCM (channels averaged, linear resampling)."""
    import numpy as np

    with wave.open(str(path)) as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16-bit PCM, got {8 * w.getsampwidth()}-bit")
        rate, channels = w.getframerate(), w.getnchannels()
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32)
    if channels > 1:
        x = x.reshape(-1, channels).mean(axis=1)
    if rate != SAMPLE_RATE and len(x):
        n = int(round(len(x) * SAMPLE_RATE / rate))
        x = np.interp(np.linspace(0, len(x) - 1, n), np.arange(len(x)), x)
    return np.clip(x, -32768, 32767).astype("<i2").tobytes()
