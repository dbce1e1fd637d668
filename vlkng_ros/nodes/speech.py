"""Speech node: audio in -> an offline recogniser -> ``voice/text`` (which the navigator turns into
GoTo / ask / stop); ``voice/reply`` -> spoken through espeak-ng where it is installed.

Audio comes from a topic (any message type whose ``data`` field holds 16-bit little-endian mono
PCM bytes: std_msgs/UInt8MultiArray by default, audio_common_msgs/AudioData where installed) or
from the default microphone (``source: microphone``, through the ``sounddevice`` package that
pocketsphinx installs; needs a sound card, so untested here). The recogniser's command grammar
is built from the memory's object labels and refreshed on every graph update.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String
from vlkng_msgs.msg import GraphUpdate as GraphUpdateMsg

from ..core.speech import Speaker, make_recogniser
from .common import spin_main
from .navigator import import_interface

PARAMS: dict[str, tuple[Any, str]] = {
    "source": ("topic", "Where audio comes from: topic | microphone."),
    "audio_topic": ("audio", "Audio in (16-bit LE mono PCM in the message's 'data' field)."),
    "audio_type": ("std_msgs/msg/UInt8MultiArray", "Message type of audio_topic (any with a uint8[] 'data')."),
    "sample_rate": (16000, "Sample rate of the audio (Hz)."),
    "engine": ("pocketsphinx", "Recogniser: pocketsphinx (offline, bundled English model) | faster_whisper."),
    "grammar": ("labels", "pocketsphinx: labels (commands over the memory's labels) | open (free English)."),
    "model": ("", "faster_whisper: local model folder."),
    "tts": ("auto", "Speak replies: auto (espeak-ng if installed) | espeak-ng | none."),
    "voice": ("en-us", "espeak-ng voice."),
    "memory_dir": ("mem", "Memory whose object labels the command grammar names (read-only)."),
    "extra_labels": ([""], "More things the grammar should know, besides the memory's labels."),
    "voice_text_topic": ("voice/text", "Recognised text out (std_msgs/String), read by the navigator."),
    "voice_reply_topic": ("voice/reply", "Replies to speak (std_msgs/String), from the navigator."),
    "update_topic": ("graph_updates", "Merges: refresh the grammar's labels."),
}


def memory_labels(memory_dir: str) -> list[str]:
    """Every label (and label it was seen with) in a memory's graph, read without opening its
    vector store (so the speech node can run beside the suite that holds the memory)."""
    from ..core.config import VlkngConfig
    from ..core.stores.registry import open_graph_store

    path = Path(memory_dir)
    if not path.is_dir():
        return []
    graph = open_graph_store(VlkngConfig().stores, path)
    try:
        return sorted({lab for o in graph.iter_objects() for lab in [o.label, *o.labels_seen] if lab})
    finally:
        graph.close()


class SpeechNode(Node):
    def __init__(self, labels_source: Callable[[], list[str]] | None = None,
                 speaker: Speaker | None = None, **kwargs: Any) -> None:
        super().__init__("vlkng_speech", **kwargs)
        for name, (value, description) in PARAMS.items():
            self.declare_parameter(name, value, ParameterDescriptor(description=description))
        p = lambda n: self.get_parameter(n).value  # noqa: E731
        extra = [x for x in p("extra_labels") if x]
        self.labels_source = labels_source or (lambda: memory_labels(p("memory_dir")) + extra)
        self.sample_rate = int(p("sample_rate"))
        self.recogniser = make_recogniser(p("engine"), self.labels_source(), p("grammar"), p("model"),
                                          self.sample_rate)
        self.speaker = speaker or Speaker(p("tts"), p("voice"))
        self.heard: list[str] = []
        self._lock = threading.Lock()
        self.group = MutuallyExclusiveCallbackGroup()  # the recogniser is fed in order, one chunk at a time
        self.text_pub = self.create_publisher(String, p("voice_text_topic"), 10)
        self.create_subscription(String, p("voice_reply_topic"), lambda m: self.speaker.speak(m.data), 10)
        self.create_subscription(GraphUpdateMsg, p("update_topic"), lambda _m: self.refresh_vocabulary(), 10,
                                 callback_group=self.group)
        self._stream: Any = None
        if p("source") == "topic":
            self.create_subscription(import_interface(p("audio_type")), p("audio_topic"),
                                     lambda m: self.feed(bytes(m.data)), 100, callback_group=self.group)
        elif p("source") == "microphone":  # pragma: no cover - needs a sound card
            self._open_microphone()
        else:
            raise ValueError(f"speech source {p('source')!r}: use topic or microphone")
        self.get_logger().info(f"speech: {p('engine')} ({p('grammar')}), replies spoken: "
                               f"{'espeak-ng' if self.speaker.available else 'no (espeak-ng not installed)'}")

    def refresh_vocabulary(self) -> None:
        with self._lock:
            self.recogniser.set_vocabulary(self.labels_source())

    def feed(self, pcm: bytes) -> None:
        with self._lock:
            texts = self.recogniser.accept(pcm)
        for text in texts:
            self.heard.append(text)
            self.get_logger().info(f"heard: {text!r}")
            self.text_pub.publish(String(data=text))

    def _open_microphone(self) -> None:  # pragma: no cover - needs a sound card
        try:
            import sounddevice
        except ImportError as e:
            raise RuntimeError("speech source microphone: pip install sounddevice") from e
        self._stream = sounddevice.RawInputStream(samplerate=self.sample_rate, channels=1, dtype="int16",
                                                  blocksize=self.sample_rate // 10,
                                                  callback=lambda data, *_: self.feed(bytes(data)))
        self._stream.start()

    def destroy_node(self) -> None:
        if self._stream is not None:  # pragma: no cover
            self._stream.stop()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return spin_main(SpeechNode, args)
